// The lesson index: each lesson's progress in this browser ("3 / 7 steps done").
import { registerWorker } from "./offline.js";
import { loadProgress, stepsDone } from "./store.js";

for (const item of document.querySelectorAll(".lesson-list li[data-lesson]")) {
  const steps = JSON.parse(item.dataset.steps);
  const progress = loadProgress(item.dataset.lesson);
  if (!progress.visited.length) continue;
  const done = stepsDone(progress, steps);
  const note = item.querySelector(".lesson-progress");
  note.textContent = `${done.size} / ${steps.length} steps done`;
  note.hidden = false;
}

// The service worker, for the steps opened from here; the offline copy starts once a step's
// Python is ready, so that it never shares the link with a boot.
registerWorker();
