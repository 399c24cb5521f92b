// The messages between the page's kernel client (kernel-client.js) and the kernel worker (worker.js).
//
// Page → worker:
//   {config, interrupt, step}           the first message, and only the first: boot Pyodide.
//                                       `config` is the server's kernel config, `interrupt` an
//                                       Int32Array on a SharedArrayBuffer, or null, `step` the
//                                       step the page opened (its imports come first). The step
//                                       page's inline script sends it (templates/_isolation.js),
//                                       else kernel-client.js (`bootMessage`). The inline script also
//                                       puts `{config, step}` in the worker's name
//                                       (`bootFromName`), from which the worker boots at once;
//                                       the message then brings only the interrupt buffer
//   {type: "run", id, code, key, cellId, controls}  run `code` in the namespace `key` (one per
//                                       step); `controls`: the values of the cell's controls, by
//                                       name (checked by `controlValuesProblem` with the config's limits, then by Python)
//   {type: "cancel", id}                a queued run is answered as interrupted, never run
// Worker → page:
//   {type: "phase", phase, detail}      boot progress: downloading, starting, python-ready, ready
//   {type: "fatal", message}            the boot failed
//   {type: "downloads", entries}        [[url, bytes], ...] the worker fetched
//   {type: "started", id}               run `id` reached Python: its time limit counts from here
//   {type: "stream", id, name, text}    stdout or stderr of run `id`
//   {type: "truncated", id, limit}      run `id` printed more than `limit` characters
//   {type: "result", id, result}        run `id` ended: {ok, value, error_type, ..., ms}
//   {type: "crashed", id, message}      the runtime itself failed; the page replaces the worker
//
// Stopping a cell is not a message: the page writes SIGINT into the interrupt buffer, and if the
// cell has not ended in time it replaces the worker (the stop rule, stopper.js).

export const TO_WORKER = Object.freeze({ RUN: "run", CANCEL: "cancel" });

/** The first message to a kernel worker: boot Pyodide with `config`. */
export function bootMessage(config, interrupt) {
  return { config, interrupt, step: pageStep(globalThis.location?.pathname ?? "") };
}

/** What a kernel worker's name starts with when it carries its boot message (`bootFromName`). */
export const BOOT_NAME = "promptdojo-kernel ";

/**
 * The boot message (without its interrupt buffer) that a kernel worker's `name` carries, or null.
 * The step page's inline script names the worker `BOOT_NAME` + `JSON.stringify({config, step})`
 * (templates/_isolation.js): the worker boots as soon as its script runs, while a message would
 * wait for the page's thread; the interrupt buffer follows in the boot message.
 */
export function bootFromName(name) {
  if (typeof name !== "string" || !name.startsWith(BOOT_NAME)) return null;
  try {
    const { config, step = null } = JSON.parse(name.slice(BOOT_NAME.length));
    return config && typeof config === "object" ? { config, step } : null;
  } catch {
    return null;
  }
}

/** The step a page's path opens (`…/lessons/<id>/<n>` or `…/<n>/`), or null. */
export function pageStep(pathname) {
  const found = /\/(\d+)\/?(index\.html)?$/.exec(pathname);
  return found ? Number(found[1]) : null;
}

export const FROM_WORKER = Object.freeze({
  PHASE: "phase",
  FATAL: "fatal",
  DOWNLOADS: "downloads",
  STARTED: "started",
  STREAM: "stream",
  TRUNCATED: "truncated",
  RESULT: "result",
  CRASHED: "crashed",
});

/** The result of a run stopped before or outside its own code. */
export function interruptedResult() {
  return { ok: false, value: {}, error_type: "KeyboardInterrupt", error_message: "", traceback: "" };
}

/** A run that ended without running its code: `errorType`, with `reason` and what to tell. */
function unrunResult(errorType, reason, traceback) {
  return { ok: false, value: {}, error_type: errorType, error_message: reason, traceback };
}

/** The result of every run pending when the worker was replaced. */
export function restartedResult(reason) {
  return unrunResult("KernelRestarted", reason, `Python was restarted: ${reason}.`);
}

/** The result of every run pending when Python failed to start (the boot's "error" phase). */
export function notStartedResult(reason) {
  const what = `Python did not start: ${reason}. Press "Restart Python", or reload the page.`;
  return unrunResult("KernelNotStarted", reason, what);
}

/** Whether `result` is one of the two above: the run's code never ran to its end in this Python. */
export function neverRan(result) {
  return ["KernelRestarted", "KernelNotStarted"].includes(result?.error_type);
}

/**
 * Why `values` cannot be a run's control values, or null when they can: a flat object of at most
 * `maxValues` names (each at most `maxText` characters) to booleans, finite numbers or texts of at
 * most `maxText` characters. A control's value is data, never code. The limits are Python's
 * (promptdojo.kernel.control_values), from the kernel config: `maxControlValues`, `maxControlText`.
 */
export function controlValuesProblem(values, { maxValues, maxText }) {
  if (values === undefined) return null;
  if (values === null || typeof values !== "object" || Array.isArray(values)) {
    return "control values must be an object of names to values";
  }
  const entries = Object.entries(values);
  if (entries.length > maxValues) return `at most ${maxValues} control values`;
  for (const [name, value] of entries) {
    const ok =
      typeof value === "boolean" ||
      (typeof value === "number" && Number.isFinite(value)) ||
      (typeof value === "string" && value.length <= maxText);
    if (!ok || name.length > maxText) {
      const sent = JSON.stringify(String(value)).slice(0, 80);
      return (
        `the control ${JSON.stringify(name)} was sent ${sent}: ` +
        "a control's value is true/false, a number, or a short text"
      );
    }
  }
  return null;
}

/** The result of a run whose control values were refused before Python saw them. */
export function refusedResult(problem) {
  const text = `ControlError: ${problem}`;
  return {
    ok: false,
    value: {},
    error_type: "ControlError",
    error_message: problem,
    traceback: text,
    controls: [],
  };
}

/**
 * Mark a step of a worker's boot (`pd:worker:<step>`) on its performance timeline: Chromium's
 * trace shows the marks of every thread (bench/trace_boot.py reads them). Costs nothing else.
 */
export function bootMark(step) {
  globalThis.performance?.mark?.(`pd:worker:${step}`);
}
