// Page entry for a lesson: the kernel session and status, the current step, in-place navigation
// between steps (the kernel worker keeps running), progress, and export/import of the work.
import { navigateInPlace, prefetch } from "./nav.js";
import { KernelSession } from "./session.js";
import { showKernelStatus } from "./status.js";
import { mountStep } from "./step.js";
import { markSolved, markVisited, stepsDone } from "./store.js";
import { wireWorkFiles } from "./work.js";

/** Ticks in the step list and the "3 / 7" count, from the stored progress. */
function renderProgress(progress) {
  const items = [...document.querySelectorAll(".lesson-steps li[data-step]")];
  const steps = items.map((item) => [
    item.dataset.step,
    item.dataset.exercises ? item.dataset.exercises.split(" ") : [],
  ]);
  const done = stepsDone(progress, steps);
  for (const item of items) {
    const complete = done.has(item.dataset.step);
    const visited = progress.visited.includes(Number(item.dataset.step));
    item.classList.toggle("visited", visited);
    item.classList.toggle("done", complete);
    const mark = item.querySelector(".tick");
    if (mark) mark.textContent = complete ? "✓ done" : visited ? "visited" : "";
  }
  const count = document.querySelector(".progress-count");
  if (count) count.textContent = `${done.size} / ${items.length}`;
}

/** Mark the exercises solved on an earlier visit. */
function markSolvedBefore(root, cellIds) {
  for (const cellId of cellIds) {
    const status = root.querySelector(`.cell[data-cell-id="${CSS.escape(cellId)}"] .cell-status`);
    if (status && !status.textContent) {
      status.textContent = "✓ Solved before";
      status.classList.add("solved");
    }
  }
}

/** The kernel start.js created; start.js is async, so it may still be on its way. */
function kernelClient() {
  if (window.promptdojoKernel) return Promise.resolve(window.promptdojoKernel);
  return new Promise((resolve) =>
    window.addEventListener("promptdojo:kernel", () => resolve(window.promptdojoKernel), {
      once: true,
    }),
  );
}

/** Step links, back/forward, Alt+PageDown / Alt+PageUp navigate in place; Ctrl+. stops. */
function wireNavigation(go, session) {
  document.addEventListener("click", (event) => {
    const link = event.target.closest?.("a[data-step-link]");
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    go(link.href);
  });
  window.addEventListener("popstate", () => go(location.href, { push: false }));
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === ".") {
      event.preventDefault();
      session.requestStop();
    } else if (event.altKey && (event.key === "PageDown" || event.key === "PageUp")) {
      const link = document.querySelector(event.key === "PageDown" ? "a[rel=next]" : "a[rel=prev]");
      if (link) {
        event.preventDefault();
        go(link.href);
      }
    }
  });
}

async function main() {
  const kernel = await kernelClient();
  const session = new KernelSession(kernel);
  let mounted = null;
  let current = null; // the step's side of the session
  // The step's neighbours are fetched once Python is ready: during the boot, they would take a
  // connection and link time from its downloads (browsers open six connections to a host).
  const prefetchNeighbours = () => {
    for (const link of document.querySelectorAll(".step-nav a")) prefetch(link.href);
  };
  showKernelStatus(kernel, document.querySelector(".kernel-status"), () => session.restart());
  session.onReady(() => {
    mounted?.setReady();
    current?.ensureSetup(); // the step's hidden set-up runs now, not on the learner's first click
    prefetchNeighbours();
  });

  // `atTop`: the step is shown from its top (opened by a link, or loaded with no anchor and
  // unscrolled), so the editors below its first screen can wait (step.js).
  const mount = (navigated = false, atTop = !location.hash && window.scrollY === 0) => {
    const data = JSON.parse(document.getElementById("step-data").textContent);
    const root = document.querySelector("main");
    current = session.enter(`${data.lesson}/${data.step}`, data.setup ?? []);
    mounted = mountStep(root, {
      step: current,
      session,
      config: kernel.config,
      data,
      atTop,
      onSolved: (cellId) => renderProgress(markSolved(data.lesson, data.step, cellId)),
    });
    if (session.runnable) {
      mounted.setReady();
      current.ensureSetup();
    }
    if (navigated && session.runnable) performance.mark("pd:step-runnable");
    const progress = markVisited(data.lesson, data.step);
    renderProgress(progress);
    markSolvedBefore(root, progress.solved[data.step] ?? []);
    if (session.runnable) prefetchNeighbours();
  };

  const go = async (url, options = {}) => {
    performance.mark("pd:nav-start");
    await navigateInPlace(url, {
      ...options,
      before: () => mounted?.unmount(),
      // A link opens the step at its top (nav.js); back and forward keep the place.
      after: () => mount(true, options.push !== false && !location.hash),
    });
  };
  wireNavigation(go, session);
  wireWorkFiles(
    () => go(location.href, { push: false, fresh: true }),
    () => mounted?.flush(),
  );
  // A tab closed or a page left within an edit's debounce keeps that edit.
  window.addEventListener("pagehide", () => mounted?.flush());
  history.replaceState({ promptdojo: true }, "", location.href);
  mount();
}

main();
