// The kernel worker: one module Web Worker per page, owning one Pyodide. Its messages are
// defined in protocol.js.
import { bootCellRunner } from "./boot.js";
import { fetchBytes, quietForCompiled, startDownloads, watchDownloads } from "./downloads.js";
import { unchangingFiles, withOfflineCopy } from "./offline-copy.js";
import { withTwins, zstdLoader } from "../shared/twins.js";
import {
  bootFromName,
  bootMark,
  controlValuesProblem,
  FROM_WORKER,
  interruptedResult,
  refusedResult,
  TO_WORKER,
} from "../shared/protocol.js";

/** The browser's `fetch`: `init` puts the offline copy in front of it (offline-copy.js). */
const networkFetch = self.fetch;

/** Output is posted at most this often while a cell runs, so a chatty loop cannot flood the page. */
const FLUSH_MS = 50;
/**
 * Characters of stdout + stderr one cell may show; the rest is dropped, with a marker. Python's
 * (promptdojo.kernel.OUTPUT_CAP), from the kernel config.
 */
let outputCap = Infinity;
/** What one run's control values may be: Python's limits (promptdojo.kernel), from the config. */
let controlLimits = { maxValues: 0, maxText: 0 };
let shown = 0;
let truncated = false;

let ready = null;
let current = null;
const pending = { stdout: "", stderr: "" };
let lastFlush = 0;

function flush() {
  for (const name of ["stdout", "stderr"]) {
    if (pending[name]) {
      self.postMessage({ type: FROM_WORKER.STREAM, id: current, name, text: pending[name] });
      pending[name] = "";
    }
  }
  lastFlush = performance.now();
}

function onStream(name, text) {
  if (truncated) return;
  if (shown + text.length > outputCap) {
    // Keep what fits, send it, then the marker: nothing follows the marker.
    pending[name] += text.slice(0, Math.max(0, outputCap - shown));
    shown = outputCap;
    truncated = true;
    flush();
    self.postMessage({ type: FROM_WORKER.TRUNCATED, id: current, limit: outputCap });
    return;
  }
  shown += text.length;
  pending[name] += text;
  // A running cell blocks this worker's event loop, so flush from inside the write callback.
  if (performance.now() - lastFlush >= FLUSH_MS) flush();
}

let interrupt = null;
const cancelled = new Set();

/** How long this worker must have run nothing before it runs the lesson's warm-ups (below). */
const WARM_UP_WHEN_IDLE_MS = 500;
/** When this worker last was ready, or started or answered a run (`performance.now()`). */
let lastBusy = 0;

/** Resolve once this worker has run nothing for `ms`. */
async function idleFor(ms) {
  for (let left = ms; left > 0; left = lastBusy + ms - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, left));
  }
}

/**
 * Import what the lesson's other steps import (`imports`: the config's, by step), the next steps
 * first, once Python is ready: one module per turn of this worker's event loop, so a Run that
 * arrives meanwhile waits for one import at most. Once no run has started or ended for half a
 * second (not between the runs of a chain of cells), in a turn of its own, run the warm-ups of
 * the lesson's modules that have one (the tiny model's first forward pass, some 200 ms in
 * Chromium), the opened step's first: the browser then compiles their hot loops fully in the
 * background while the learner reads, and a step reached in place gains as much as the opened
 * one. (Run before "ready", the warm-up made "ready" that much later, and a Run pressed at
 * "ready" gained nothing: the compiling had not finished.) A Run that arrives during one of
 * these turns waits for it; no turn starts while a Run waits (`betweenRuns`).
 */
async function importInTurns(runner, imports, step) {
  lastBusy = performance.now();
  const numbers = Object.keys(imports).map(Number);
  numbers.sort((a, b) => (a < step) - (b < step) || a - b);
  const done = new Set(imports[step] ?? []);
  for (const name of numbers.flatMap((number) => imports[number])) {
    if (done.has(name)) continue;
    done.add(name);
    await betweenRuns();
    runner.importModules([name]);
  }
  do {
    await idleFor(WARM_UP_WHEN_IDLE_MS);
    await betweenRuns(); // a run that came in as the wait ended goes first; then wait again
  } while (performance.now() - lastBusy < WARM_UP_WHEN_IDLE_MS);
  runner.warmUpModules([...done]);
}

/** Runs taken (their message read) and not yet answered: the turns between runs wait for them. */
let runsWaiting = 0;

/** Count a run from its message's arrival to its answer; its answer makes the worker busy now. */
async function counted(work) {
  runsWaiting += 1;
  try {
    await work();
  } finally {
    runsWaiting -= 1;
    lastBusy = performance.now();
  }
}

/**
 * Resolve in a turn of this worker's event loop of its own, once no run waits: a run comes
 * before an import or a warm-up, also while it waits for the messages behind it
 * (`afterWaitingMessages`). A run holds this thread while it runs, so what is waited out here
 * is that one turn (or, after a crash, runs that wait until the page ends this worker).
 */
async function betweenRuns() {
  do {
    await new Promise((resolve) => setTimeout(resolve, 0));
  } while (runsWaiting > 0);
}

/**
 * Resolve once the messages already waiting for this worker have been handled: a message of its
 * own, posted now, queues behind them. A run and the page's cancel of it can both wait while
 * another run holds this thread; taken in turn, the run would start (its `ready` already
 * resolved) before the cancel behind it was read.
 */
function afterWaitingMessages() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/** Answer run `id` as stopped: cancelled before it started, or interrupted outside the cell. */
function postInterrupted(id) {
  self.postMessage({ type: FROM_WORKER.RESULT, id, result: interruptedResult() });
}

/**
 * Compile Pyodide's WebAssembly as soon as its bytes arrive, while the snapshot downloads: Pyodide
 * itself compiles it only once it holds the snapshot. Pyodide's own request for the file is
 * answered with a stand-in (the browser would otherwise download and decode the 10 MB a second
 * time, while the snapshot arrives), and its `instantiateStreaming` call instantiates the module
 * compiled here (also for a cold boot after a restore that failed before instantiating, such as
 * a snapshot whose hash is wrong: that boot's request is a real one). If that compile failed,
 * the call gets the real file.
 */
function compileCoreEarly(indexURL) {
  const url = new URL("pyodide.asm.wasm", new URL(indexURL, self.location.href)).href;
  const compiled = WebAssembly.compileStreaming(fetch(url));
  compiled.catch(() => {}); // the browser's own instantiation below reports it
  compiled.then(() => bootMark("wasm-compiled"), () => {});
  const standIn = new Response(null);
  const { fetch: realFetch } = self;
  self.fetch = (input, init) => {
    if (String(input?.url ?? input) !== url) return realFetch(input, init);
    self.fetch = realFetch; // once: the worker has one core
    return Promise.resolve(standIn);
  };
  const instantiateStreaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async (source, imports) => {
    const response = await source;
    const ours = response === standIn || response?.url === url; // the latter: a second boot
    if (!ours) return instantiateStreaming(response, imports);
    WebAssembly.instantiateStreaming = instantiateStreaming;
    try {
      const module = await compiled;
      return { module, instance: await WebAssembly.instantiate(module, imports) };
    } catch {
      return instantiateStreaming(response === standIn ? realFetch(url) : response, imports);
    }
  };
}

/**
 * The standard library a snapshot was made with (kernel config `snapshot.stdlib`), fetched as
 * soon as the worker starts and once more if it breaks off (a cut twin comes the second time as
 * the file itself, twins.js). Pyodide's own request for it (`stdLibURL`) is answered with those
 * bytes, so a bad link costs it nothing but time; `bytes` rejects with the reason if both fail.
 * Null without a snapshot: Pyodide then fetches its own.
 */
function fetchStdlib(url) {
  if (!url) return null;
  const href = new URL(url, self.location.origin).href;
  const fetchOthers = self.fetch;
  const bytes = fetchBytes(href, "the standard library", 2, fetchOthers);
  bytes.catch(() => {}); // the boot that awaits it fails with the reason
  // Pyodide asks with a URL object; others with a string or a Request.
  const asked = (input) => (input instanceof Request ? input.url : String(input));
  self.fetch = (input, init) =>
    new URL(asked(input), self.location.href).href === href
      ? bytes.then((data) => new Response(data, { headers: { "content-type": "application/zip" } }))
      : fetchOthers(input, init);
  return { url: href, bytes };
}

/** @param {import("../shared/contract.js").KernelConfig} config */
async function init(config, step) {
  outputCap = config.outputCap;
  controlLimits = { maxValues: config.maxControlValues, maxText: config.maxControlText };
  // This worker's downloads and its download workers', for the page's byte count.
  const onEntries = (entries) => self.postMessage({ type: FROM_WORKER.DOWNLOADS, entries });
  const stopWatching = watchDownloads(onEntries);
  // The boot's own files (Pyodide's standard library and lock file included) are read from the
  // course's offline copy first, but Pyodide's wasm, which the HTTP cache answers first, with
  // its compiled code (offline-copy.js); every other request goes to the network as before.
  // An export's files come through their compressed twins (twins.js); a twin that fails is said
  // once, on the ready line, and the file itself fetched (a compiled wheel's twin: only in the
  // console, as its wheel takes over).
  const fellBack = [];
  const note = quietForCompiled(config, (message) => {
    console.warn(message);
    fellBack.push(message.replace(/^promptdojo: /, ""));
  });
  self.fetch = withTwins(withOfflineCopy(networkFetch, unchangingFiles(config)), config.twins, {
    sniffed: unchangingFiles(config),
    loadZstd: zstdLoader(config),
    onFallBack: note,
  });
  const stdlib = fetchStdlib(config.snapshot?.stdlib);
  compileCoreEarly(config.pyodideUrl);
  // The snapshot, the wheels and the learner bundle, from download workers: a failed snapshot
  // means a cold boot, failed wheels Pyodide's own loadPackage. "ready" says where they were
  // downloaded.
  const downloads = startDownloads(config, onEntries, note);
  const phase = (name, detail = {}) => {
    if (name === "ready") detail = { ...detail, downloadedIn: downloads.where(), fellBack };
    self.postMessage({ type: FROM_WORKER.PHASE, phase: name, detail });
  };
  phase("downloading"); // the starts above post nothing before it
  try {
    const { loadPyodide } = await import(`${config.pyodideUrl}pyodide.mjs`);
    return await bootCellRunner({
      // Pyodide only logs a standard library it could not have, then fails on its own: the boot
      // fails with the reason (the download's rejection comes first).
      loadPyodide: stdlib
        ? async (options) => (await Promise.all([loadPyodide(options), stdlib.bytes]))[0]
        : loadPyodide,
      indexURL: config.pyodideUrl,
      packageBaseUrl: new URL(config.packagesUrl, self.location.origin).href,
      packages: config.packages,
      wheels: config.wheels ?? [],
      prepared: downloads.wheels,
      // Unzipped by its download worker; it comes last (download-order.js): a restored boot
      // needs it only for the learner library's imports, after numpy's (boot.js).
      bundle: downloads.bundle,
      snapshot: downloads.snapshot,
      // A snapshot with the lesson's packages in it: their libraries load before it restores.
      snapshotPackages: config.snapshot?.packages ?? null,
      onStream,
      onPhase: phase,
      imports: config.imports?.[step] ?? [],
      // The snapshot restores against the standard library it was made with.
      pyodideOptions: stdlib ? { stdLibURL: stdlib.url } : {},
    });
  } finally {
    stopWatching();
    downloads.stop();
  }
}

/** Boot Pyodide with `config` for the page's `step` (protocol.js), once. */
function boot(config, step) {
  ready = init(config, step).then((runner) => {
    importInTurns(runner, config.imports ?? {}, step);
    return runner;
  });
  ready.catch((error) =>
    self.postMessage({ type: FROM_WORKER.FATAL, message: String(error?.message ?? error) }),
  );
}

/** The boot message's interrupt buffer, given to Python once it is ready. */
function takeInterrupt(buffer) {
  interrupt = buffer;
  if (interrupt) ready.then((runner) => runner.setInterruptBuffer(interrupt), () => {});
}

/** Run the cell of the RUN `message` and answer it (or answer why it did not run). */
async function handleRun(message) {
  const runner = await ready;
  await afterWaitingMessages(); // a cancel that came in behind this run is read first
  if (cancelled.delete(message.id)) {
    postInterrupted(message.id);
    return;
  }
  const problem = controlValuesProblem(message.controls, controlLimits);
  if (problem) {
    self.postMessage({ type: FROM_WORKER.RESULT, id: message.id, result: refusedResult(problem) });
    return;
  }
  self.postMessage({ type: FROM_WORKER.STARTED, id: message.id });
  current = message.id;
  lastFlush = performance.now();
  lastBusy = lastFlush;
  shown = 0;
  truncated = false;
  let result;
  const started = performance.now();
  try {
    result = runner.run(message.code, {
      key: message.key,
      cellId: message.cellId,
      controls: message.controls,
    });
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
    self.postMessage({
      type: FROM_WORKER.CRASHED,
      id: message.id,
      message: text.at(-1) || "unknown error",
    });
    ready = new Promise(() => {}); // take no more runs; the page terminates this worker
    return;
  }
  flush();
  self.postMessage({ type: FROM_WORKER.RESULT, id: message.id, result });
  current = null;
}

// A worker whose name carries its boot message (the step page's inline script) boots now,
// without waiting for the message, which reaches it only once the page's thread is free.
const named = bootFromName(self.name);
if (named) boot(named.config, named.step);
let booted = false;

self.onmessage = async (event) => {
  const message = event.data;
  if (!booted) {
    // The first message boots (protocol.js): from the page's inline script, or from kernel-client.js.
    booted = true;
    if (ready === null) boot(message.config, message.step);
    takeInterrupt(message.interrupt);
    return;
  }
  if (message.type === TO_WORKER.CANCEL) {
    cancelled.add(message.id);
    return;
  }
  if (message.type === TO_WORKER.RUN) await counted(() => handleRun(message));
};
