// Page entry for a lesson: the kernel status, the current step, in-place navigation between
// steps (the kernel worker keeps running), progress, and export/import of the learner's work.
import { navigateInPlace, prefetch } from "./nav.js";
import { StepState, mountStep } from "./step.js";
import { exportWork, importWork, markSolved, markVisited, stepsDone } from "./store.js";

const PHASE_TEXT = {
  restarting: "Python: restarting…",
  downloading: "Python: downloading…",
  starting: "Python: starting…",
  "python-ready": "Python: loading the lesson library…",
  packages: "Python: loading packages…",
  ready: "Python: ready",
  error: "Python failed to start",
};

function formatBytes(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} kB`;
}

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

/** The kernel start.js created; start.js is async, so it may still be on its way. */
function kernelClient() {
  if (window.promptdojoKernel) return Promise.resolve(window.promptdojoKernel);
  return new Promise((resolve) =>
    window.addEventListener("promptdojo:kernel", () => resolve(window.promptdojoKernel), {
      once: true,
    }),
  );
}

async function main() {
  const kernel = await kernelClient();
  const status = document.querySelector(".kernel-status");
  const session = { stopBeforeStart: false, restartNote: "" };
  const stepStates = new Map();
  let ready = false;
  let current = null; // {key, data, mounted}

  const stateOf = (key) => {
    if (!stepStates.has(key)) stepStates.set(key, new StepState());
    return stepStates.get(key);
  };

  const restartButton = document.querySelector(".restart-python");
  let downloaded = 0;
  let phaseNow = "loading";
  let phaseDetail = {};
  kernel.addPhaseListener((phase, detail) => {
    if (phase === "progress") {
      // Bytes of the boot's downloads so far, shown until Python is ready.
      downloaded = detail.bytes;
      if (phaseNow === "ready" || phaseNow === "error" || !downloaded) return;
      [phase, detail] = [phaseNow, phaseDetail];
    }
    if (phase === "restarting") downloaded = 0; // the new worker counts its own downloads
    [phaseNow, phaseDetail] = [phase, detail];
    status.dataset.phase = phase;
    let text = PHASE_TEXT[phase] ?? `Python: ${phase}`;
    if (phase === "starting" && detail.packages?.length) {
      // Packages load while the interpreter starts (loadPyodide's `packages` option).
      text = `Python: starting and loading ${detail.packages.join(", ")}…`;
    }
    if (phase !== "ready" && phase !== "error" && downloaded) {
      text += ` (${formatBytes(downloaded)} downloaded)`;
    }
    if (phase === "error") text += `: ${detail.message}`;
    if (phase === "ready" && detail.missing?.length) {
      text += ` (without ${detail.missing.join(", ")}: see the message when a cell imports it)`;
    }
    status.textContent = text;
    if (phase === "ready") {
      ready = true;
      current?.mounted.setReady();
    }
    if (restartButton) restartButton.disabled = phase !== "ready" && phase !== "error";
  });

  // "Restart Python": a fresh worker and nothing replayed, for a learner who wants a clean slate.
  let freshRestart = false;
  restartButton?.addEventListener("click", () => {
    freshRestart = true;
    restartButton.disabled = true;
    kernel.restart("you restarted it");
  });

  // A fresh worker has empty namespaces: replay the current step, forget the others (their setup
  // runs again when the learner goes back to them).
  kernel.addRestartListener((reason) => {
    if (freshRestart) {
      freshRestart = false;
      // Reset in place: the mounted step holds its state object.
      for (const state of stepStates.values()) {
        state.setupDone = null;
        state.succeeded = [];
      }
      session.restartNote = "Python was restarted: every step starts fresh.";
      return;
    }
    for (const key of [...stepStates.keys()]) {
      if (key !== current?.key) stepStates.delete(key);
    }
    const state = current && stateOf(current.key);
    if (!state) return;
    const replay = [...(current.data.setup ?? []), ...state.succeeded];
    session.restartNote = `Python was restarted (${reason}); replayed ${state.succeeded.length} earlier cell(s).`;
    const key = current.key;
    state.setupDone = (async () => {
      for (const cell of replay) {
        await kernel.run(cell.code, { key, cellId: cell.id, internal: true });
      }
    })();
  });

  // Stop can come before the run reaches the kernel (setup cells still running): remember it.
  const requestStop = () => {
    if (kernel.lastLearnerRun() !== undefined) kernel.stop();
    else if (document.querySelector(".cell[data-running]")) session.stopBeforeStart = true;
  };

  const mount = (navigated = false) => {
    const data = JSON.parse(document.getElementById("step-data").textContent);
    const key = `${data.lesson}/${data.step}`;
    const root = document.querySelector("main");
    const mounted = mountStep(root, {
      kernel,
      session,
      data,
      state: stateOf(key),
      isReady: () => ready,
      requestStop,
      onSolved: (cellId) => renderProgress(markSolved(data.lesson, data.step, cellId)),
    });
    current = { key, data, mounted };
    if (ready) mounted.setReady();
    if (navigated && ready) performance.mark("pd:step-runnable");
    const progress = markVisited(data.lesson, data.step);
    renderProgress(progress);
    for (const cellId of progress.solved[data.step] ?? []) {
      const status = root.querySelector(`.cell[data-cell-id="${CSS.escape(cellId)}"] .cell-status`);
      if (status && !status.textContent) {
        status.textContent = "✓ Solved before";
        status.classList.add("solved");
      }
    }
    for (const link of document.querySelectorAll(".step-nav a")) prefetch(link.href);
  };

  const go = async (url, options = {}) => {
    performance.mark("pd:nav-start");
    await navigateInPlace(url, {
      ...options,
      before: () => current?.mounted.unmount(),
      after: () => mount(true),
    });
  };

  // In-place navigation: step links, back/forward, and Alt+PageDown / Alt+PageUp.
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
      requestStop();
    } else if (event.altKey && (event.key === "PageDown" || event.key === "PageUp")) {
      const link = document.querySelector(event.key === "PageDown" ? "a[rel=next]" : "a[rel=prev]");
      if (link) {
        event.preventDefault();
        go(link.href);
      }
    }
  });

  // Export / import of everything stored for promptdojo in this browser.
  document.addEventListener("click", (event) => {
    if (!event.target.closest?.(".export-work")) return;
    const blob = new Blob([JSON.stringify(exportWork(), null, 2)], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `promptdojo-work-${new Date().toISOString().slice(0, 10)}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  });
  document.addEventListener("change", async (event) => {
    const input = event.target.closest?.(".import-work input[type=file]");
    if (!input?.files?.length) return;
    const file = input.files[0];
    input.value = "";
    try {
      const { edits } = importWork(await file.text());
      await go(location.href, { push: false, fresh: true });
      document.querySelector(".work-status").textContent =
        `Imported ${edits} edited cell(s) from ${file.name}.`;
    } catch (error) {
      document.querySelector(".work-status").textContent =
        `Could not import ${file.name}: ${error.message}. Nothing was changed.`;
    }
  });

  history.replaceState({ promptdojo: true }, "", location.href);
  mount();
}

main();
