// The kernel status line ("Python: starting… (12.3 MB downloaded)") and the Restart button.

const PHASE_TEXT = {
  restarting: "Python: restarting…",
  downloading: "Python: downloading…",
  starting: "Python: starting…",
  "python-ready": "Python: loading the lesson library…",
  packages: "Python: loading packages…",
  ready: "Python: ready",
  error: "Python failed to start",
};

/** What a boot whose last phase is this one is waiting for. */
const WAITING_FOR = {
  loading: "the Python worker to start",
  restarting: "the new Python worker to start",
  downloading: "Pyodide's files to arrive",
  starting: "the interpreter to start",
  "python-ready": "the lesson library to load",
  packages: "the lesson's packages to load",
};

export function formatBytes(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} kB`;
}

/** The status line for `phase`, with the bytes downloaded so far while Python boots. */
export function phaseText(phase, detail, downloaded) {
  let text = PHASE_TEXT[phase] ?? `Python: ${phase}`;
  if (phase === "starting" && detail.packages?.length) {
    // Packages load while the interpreter starts (loadPyodide's `packages` option).
    text = `Python: starting and loading ${detail.packages.join(", ")}…`;
  }
  if (phase !== "ready" && phase !== "error" && downloaded) {
    text += ` (${formatBytes(downloaded)} downloaded)`;
  }
  if (phase === "error") text += `: ${detail.message}`;
  if (phase === "ready" && detail.snapshotFailed) {
    // Said once, on the ready line; the page works as after any cold boot.
    text += ` (started from scratch: ${detail.snapshotFailed})`;
  }
  if (phase === "ready" && detail.fellBack?.length) {
    // A compressed copy the host broke: the file itself was fetched (twins.js). Said once.
    text += ` (${detail.fellBack.join("; ")})`;
  }
  if (phase === "ready" && detail.missing?.length) {
    text += ` (without ${detail.missing.join(", ")}: see the message when a cell imports it)`;
  }
  return text;
}

/** The status line of a boot not ready after `seconds`: which phase it waits in, bytes so far. */
export function waitingText(phase, downloaded, seconds) {
  const waiting = WAITING_FOR[phase] ?? `the step after "${phase}"`;
  const bytes = downloaded ? `${formatBytes(downloaded)} downloaded so far` : "nothing downloaded yet";
  return (
    `Python is not ready after ${Math.round(seconds)} s: still waiting for ${waiting} (${bytes}). ` +
    "Reloading the page may help; the console may say more."
  );
}

/**
 * Show the kernel's boot phases in `status` (a view: it changes nothing but the status line and
 * the Restart button), and wire the Restart button to `restart()`.
 */
export function showKernelStatus(kernel, status, restart) {
  const restartButton = document.querySelector(".restart-python");
  let downloaded = 0;
  let phaseNow = "loading";
  let phaseDetail = {};
  // A boot not ready after `bootPatienceMs` says what it is still waiting for, until it is.
  let late = false;
  let patience = null;
  const watch = () => {
    clearTimeout(patience);
    late = false;
    const limit = kernel.config?.bootPatienceMs;
    if (!limit) return;
    patience = setTimeout(() => {
      late = phaseNow !== "ready" && phaseNow !== "error";
      if (late) status.textContent = waitingText(phaseNow, downloaded, limit / 1000);
    }, limit);
  };
  watch();
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
    status.textContent = phaseText(phase, detail, downloaded);
    if (phase === "restarting") watch();
    if (phase === "ready" || phase === "error") clearTimeout(patience);
    else if (late) status.textContent = waitingText(phase, downloaded, kernel.config.bootPatienceMs / 1000);
    if (phase === "ready" && kernel.isolationNote) {
      // Said once, on the ready line: without SharedArrayBuffer, Stop cannot interrupt Python.
      status.textContent += ` (Stop restarts Python and replays the step: ${kernel.isolationNote})`;
    }
    if (restartButton) restartButton.disabled = phase !== "ready" && phase !== "error";
  });
  // "Restart Python": a fresh worker and nothing replayed, for a learner who wants a clean slate.
  restartButton?.addEventListener("click", () => {
    restartButton.disabled = true;
    restart();
  });
}
