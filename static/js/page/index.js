// The course map: each lesson's progress in this browser ("3 / 7 steps done"), the "continue"
// link to the first step not done, and the course search.
import { firstUnfinished, stepUrl } from "./course.js";
import { registerWorker } from "./offline.js";
import { startSearch } from "./search.js";
import { loadProgress, stepsDone } from "./store.js";

const lessons = [];
for (const item of document.querySelectorAll(".lesson-list li[data-lesson]")) {
  const steps = JSON.parse(item.dataset.steps);
  lessons.push({ id: item.dataset.lesson, steps, title: item.querySelector("a").textContent });
  const progress = loadProgress(item.dataset.lesson);
  if (!progress.visited.length) continue;
  const done = stepsDone(progress, steps);
  const note = item.querySelector(".lesson-progress");
  note.textContent = `${done.size} / ${steps.length} steps done`;
  note.hidden = false;
}

const resume = document.querySelector(".continue");
const next = firstUnfinished(lessons, loadProgress);
if (resume && next) {
  const link = resume.querySelector("a");
  const title = lessons.find((lesson) => lesson.id === next.lesson).title;
  link.href = stepUrl(resume.dataset.stepUrl, next.lesson, next.step);
  link.textContent = next.started
    ? `Continue: ${title}, step ${next.step}`
    : `Start the course: ${title}`;
  resume.hidden = false;
}

const search = document.querySelector(".course-search");
if (search) startSearch(search);

// The service worker, for the steps opened from here; the offline copy starts once a step's
// Python is ready, so that it never shares the link with a boot.
registerWorker();
