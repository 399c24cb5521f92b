// The kernel worker: one module Web Worker per page, owning one Pyodide.
//
// Messages in:  {type: "init", config}, {type: "run", id, code, key, cellId}
// Messages out: {type: "phase", phase, detail}, {type: "stream", id, name, text},
//               {type: "result", id, result} (result.ms: time in Python),
//               {type: "fatal", message} (boot failed),
//               {type: "crashed", id, message} (the runtime failed while running a cell)
import { bootKernel } from "./boot.js";

/** Output is posted at most this often while a cell runs, so a chatty loop cannot flood the page. */
const FLUSH_MS = 50;
/** Characters of stdout + stderr one cell may show; the rest is dropped, with a marker. */
const OUTPUT_CAP = 100_000;
let shown = 0;
let truncated = false;

let ready = null;
let current = null;
const pending = { stdout: "", stderr: "" };
let lastFlush = 0;

function flush() {
  for (const name of ["stdout", "stderr"]) {
    if (pending[name]) {
      self.postMessage({ type: "stream", id: current, name, text: pending[name] });
      pending[name] = "";
    }
  }
  lastFlush = performance.now();
}

function onStream(name, text) {
  if (truncated) return;
  if (shown + text.length > OUTPUT_CAP) {
    // Keep what fits, send it, then the marker: nothing follows the marker.
    pending[name] += text.slice(0, Math.max(0, OUTPUT_CAP - shown));
    shown = OUTPUT_CAP;
    truncated = true;
    flush();
    self.postMessage({ type: "truncated", id: current, limit: OUTPUT_CAP });
    return;
  }
  shown += text.length;
  pending[name] += text;
  // A running cell blocks this worker's event loop, so flush from inside the write callback.
  if (performance.now() - lastFlush >= FLUSH_MS) flush();
}

let interrupt = null;
const cancelled = new Set();

/** Answer run `id` as stopped: cancelled before it started, or interrupted outside the cell. */
function postInterrupted(id) {
  const result = { ok: false, value: {}, error_type: "KeyboardInterrupt", error_message: "" };
  self.postMessage({ type: "result", id, result: { ...result, traceback: "" } });
}

/**
 * Report this worker's downloads (Pyodide's wasm and stdlib, the learner bundle, packages) as each
 * completes; the page adds its own preloads and shows the total next to the boot phase.
 */
function watchDownloads() {
  if (typeof PerformanceObserver === "undefined") return () => {};
  const observer = new PerformanceObserver((list) => {
    const entries = list.getEntries().map((entry) => [entry.name, entry.transferSize || 0]);
    self.postMessage({ type: "downloads", entries });
  });
  observer.observe({ type: "resource", buffered: true });
  return () => observer.disconnect();
}

async function init(config) {
  const phase = (name, detail = {}) => self.postMessage({ type: "phase", phase: name, detail });
  phase("downloading");
  const stopWatching = watchDownloads();
  const bundle = fetch(config.bundleUrl).then((response) => {
    if (!response.ok) throw new Error(`learner bundle: HTTP ${response.status}`);
    return response.arrayBuffer();
  });
  const { loadPyodide } = await import(`${config.pyodideUrl}pyodide.mjs`);
  try {
    return await bootKernel({
      loadPyodide,
      indexURL: config.pyodideUrl,
      packageBaseUrl: new URL(config.packagesUrl, self.location.origin).href,
      packages: config.packages,
      bundle: await bundle,
      onStream,
      onPhase: phase,
    });
  } finally {
    stopWatching();
  }
}

self.onmessage = async (event) => {
  const message = event.data;
  if (message.type === "init") {
    interrupt = message.interrupt;
    ready = init(message.config).then((kernel) => {
      if (interrupt) kernel.setInterruptBuffer(interrupt);
      return kernel;
    });
    ready.catch((error) =>
      self.postMessage({ type: "fatal", message: String(error?.message ?? error) }),
    );
    return;
  }
  if (message.type === "cancel") {
    cancelled.add(message.id);
    return;
  }
  if (message.type === "run") {
    const kernel = await ready;
    if (cancelled.delete(message.id)) {
      postInterrupted(message.id);
      return;
    }
    self.postMessage({ type: "started", id: message.id });
    current = message.id;
    lastFlush = performance.now();
    shown = 0;
    truncated = false;
    let result;
    const started = performance.now();
    try {
      result = kernel.run(message.code, { key: message.key, cellId: message.cellId });
      // Time inside Python alone (no queueing, no set-up cells): what the benchmarks report.
      result.ms = performance.now() - started;
    } catch (error) {
      if (error?.type === "KeyboardInterrupt") {
        // Stop landed outside the cell's own code (e.g. while its traceback was formatted).
        flush();
        postInterrupted(message.id);
        current = null;
        return;
      }
      // Python's own errors come back as results; an exception here means the runtime itself
      // failed (a WebAssembly trap, memory exhausted outside Python). This Pyodide is no longer
      // usable: tell the page, which replaces the worker and replays the step.
      flush();
      const text = String(error?.message ?? error).trim().split("\n");
      self.postMessage({ type: "crashed", id: message.id, message: text.at(-1) || "unknown error" });
      ready = new Promise(() => {}); // take no more runs; the page terminates this worker
      return;
    }
    flush();
    self.postMessage({ type: "result", id: message.id, result });
    current = null;
  }
};
