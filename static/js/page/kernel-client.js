// The page's client of the kernel worker: starts the worker, queues runs, routes output to
// callers, and stops runaway cells by the one stop rule (shared/stopper.js): first with an
// interrupt (Python raises KeyboardInterrupt), then, if Python has not taken the interrupt
// `config.stopGraceMs` later (or took it but the cell has not ended `config.stopWindDownMs` after
// that), by replacing the worker with a fresh one. The messages are defined in protocol.js.
import { escalateStop, GAVE_UP } from "../shared/stopper.js";
import { interruptBuffer } from "./features.js";
import {
  bootMessage,
  FROM_WORKER,
  notStartedResult,
  restartedResult,
  TO_WORKER,
} from "../shared/protocol.js";

/**
 * How long a new worker may say nothing at all once its script has arrived (the page's resource
 * timing shows when): its first word ("downloading", protocol.js) comes as soon as that script has
 * run, within tens of milliseconds. Firefox, now and then, leaves a worker started while the page
 * loads without its requests or its messages: one that has not spoken by then never will.
 */
export const SILENT_AFTER_SCRIPT_MS = 3000;
/** The same, counted from the worker's start, where no resource timing shows its script. */
export const SILENT_WORKER_MS = 30000;
/**
 * The least time a worker is given from when the page hears of its script: a page thread too
 * busy to hear of it in time may also hold the worker's first message, already waiting behind.
 */
const SILENT_MIN_WAIT_MS = 1000;

/**
 * The worker the step page's inline script started for `config` (templates/_isolation.js), taken
 * once: `{worker, interrupt, events}`, or null (none was started, or it was already taken).
 */
function adoptEarlyWorker(config) {
  const early = globalThis.promptdojoEarlyKernel;
  if (!early || early.config.workerUrl !== config.workerUrl) return null;
  globalThis.promptdojoEarlyKernel = null;
  return early;
}

export class KernelClient {
  /**
   * @param {import("../shared/contract.js").KernelConfig} config  The step page's kernel config (shared/
   *   contract.js): URLs, packages, and the shared limits `timeLimit` (seconds) and
   *   `stopGraceMs` and `stopWindDownMs`.
   * @param {{isolationNote?: string | null}} [options]  `isolationNote`: why Stop must restart
   *   Python on this page (no shared memory: features.js), said on the ready line; else null.
   */
  constructor(config, { isolationNote = null } = {}) {
    this.config = config;
    this.isolationNote = isolationNote;
    this.phases = [];
    this.listeners = [];
    this.restartListeners = [];
    /** When each of `phases` reached the page (ms since the page's time origin). */
    this.phaseTimes = [];
    this.onPhase = (phase, detail = {}, at = performance.now()) => {
      this.phases.push([phase, detail]);
      this.phaseTimes.push(at);
      for (const listener of this.listeners) listener(phase, detail, at);
      // Python will not start: the runs waiting for it end, saying why, instead of waiting on,
      // and so does every run asked for until Python is restarted.
      if (phase === "restarting") this.failedWhy = null;
      if (phase === "error") {
        this.failedWhy = detail.message ?? "the kernel worker failed";
        for (const id of [...this.runs.keys()]) this.finish(id, notStartedResult(this.failedWhy));
      }
    };
    this.runs = new Map();
    this.nextId = 1;
    /** Why Python did not start (the "error" phase), until it is restarted; else null. */
    this.failedWhy = null;
    /** The run the worker is executing, from its "started" message. */
    this.current = null;
    // Shared memory for the interrupt, where the browser gives it (features.js).
    this.interrupt = interruptBuffer();
    this.watchDownloads();
    this.start();
  }

  /**
   * Count the bytes the boot downloads, in the page and in the worker, once per URL, and report
   * them as "progress" phases until Python is ready.
   */
  watchDownloads() {
    this.downloads = new Map();
    if (typeof PerformanceObserver === "undefined") return;
    const observer = new PerformanceObserver((list) =>
      this.countDownloads(list.getEntries().map((e) => [e.name, e.transferSize || 0])),
    );
    observer.observe({ type: "resource", buffered: true });
    this.addPhaseListener((phase) => {
      if (phase === "ready" || phase === "error") observer.disconnect();
    });
  }

  countDownloads(entries) {
    let changed = false;
    for (const [name, size] of entries) {
      if (size > (this.downloads.get(name) ?? 0)) {
        this.downloads.set(name, size);
        changed = true;
      }
    }
    if (!changed) return;
    let bytes = 0;
    for (const size of this.downloads.values()) bytes += size;
    this.onPhase("progress", { bytes, files: this.downloads.size });
  }

  /**
   * Start a kernel worker, or adopt the one the page's inline script started for this config
   * (templates/_isolation.js) and replay what it has said so far.
   */
  start(early = adoptEarlyWorker(this.config)) {
    this.startedEarly = Boolean(early);
    this.stopWatchingSilence();
    if (early) {
      this.worker = early.worker;
      this.interrupt = early.interrupt;
    } else {
      try {
        this.worker = new Worker(this.config.workerUrl, { type: "module", name: "promptdojo-kernel" });
      } catch (error) {
        // A browser without module workers: say so rather than wait for a worker that never was.
        this.worker = { postMessage() {}, terminate() {} };
        const why = error?.message ?? error;
        this.onPhase("error", { message: `this browser cannot start the Python worker (${why})` });
        return;
      }
    }
    this.watchSilence(this.worker, early ? 0 : performance.now());
    this.worker.onmessage = (event) => {
      this.stopWatchingSilence();
      this.receive(event.data, event.timeStamp);
    };
    this.worker.onerror = (event) => {
      this.stopWatchingSilence();
      event.preventDefault?.();
      if (this.phases.some(([phase]) => phase === "ready")) {
        this.restart("the Python worker crashed");
      } else {
        this.onPhase("error", { message: event.message || "the kernel worker failed to start" });
      }
    };
    if (!early) {
      this.worker.postMessage(bootMessage(this.config, this.interrupt));
      return;
    }
    for (const event of early.events) {
      if (this.worker !== early.worker) break; // what was replayed restarted the kernel
      if (event.type === "message") this.worker.onmessage(event);
      else this.worker.onerror(event);
    }
  }

  /**
   * Replace `worker` (started at `since`, ms on the page's clock) if it says nothing within
   * `SILENT_AFTER_SCRIPT_MS` of its script's arrival, or `SILENT_WORKER_MS` of its start.
   */
  watchSilence(worker, since) {
    this.stopWatchingSilence();
    const replace = () => this.replaceSilent(worker);
    this.silenceTimer = setTimeout(replace, SILENT_WORKER_MS);
    if (typeof PerformanceObserver === "undefined" || !globalThis.location) return;
    const script = new URL(this.config.workerUrl, globalThis.location.href).href;
    this.scriptObserver = new PerformanceObserver((list) => {
      const arrived = list.getEntries().find((e) => e.name === script && e.responseEnd >= since);
      if (!arrived) return;
      this.scriptObserver.disconnect();
      clearTimeout(this.silenceTimer);
      const left = arrived.responseEnd + SILENT_AFTER_SCRIPT_MS - performance.now();
      this.silenceTimer = setTimeout(replace, Math.max(SILENT_MIN_WAIT_MS, left));
    });
    this.scriptObserver.observe({ type: "resource", buffered: true });
  }

  stopWatchingSilence() {
    clearTimeout(this.silenceTimer);
    this.scriptObserver?.disconnect();
    this.scriptObserver = null;
  }

  /**
   * `worker` has said nothing (`watchSilence`): it is replaced by one started here (not the
   * page's early one), and the runs waiting for it are sent to the new one. Nothing is lost.
   */
  replaceSilent(worker) {
    if (this.worker !== worker) return; // replaced meanwhile (its first word stops the watch)
    console.warn("promptdojo: the Python worker says nothing; starting another");
    worker.terminate();
    this.start(null);
    for (const run of this.runs.values()) this.worker.postMessage(run.message);
  }

  /**
   * Call `listener(phase, detail, at)` for every boot phase, including those already past; `at`
   * is when the phase reached the page, also for phases the early worker said before the client
   * existed.
   */
  addPhaseListener(listener) {
    this.phases.forEach(([phase, detail], i) => listener(phase, detail, this.phaseTimes[i]));
    this.listeners.push(listener);
  }

  /** Call `listener(reason)` after the worker was replaced (state must be replayed). */
  addRestartListener(listener) {
    this.restartListeners.push(listener);
  }

  receive(message, at = performance.now()) {
    if (message.type === FROM_WORKER.PHASE) {
      this.onPhase(message.phase, message.detail, at);
    } else if (message.type === FROM_WORKER.FATAL) {
      this.onPhase("error", { message: message.message });
    } else if (message.type === FROM_WORKER.STARTED) {
      // The time limit counts from here, not from the click: a run may wait for Python to boot.
      this.current = message.id;
      const run = this.runs.get(message.id);
      if (run) {
        run.limitTimer = setTimeout(
          () => this.stop(`it ran past its time limit of ${run.timeLimit} s`, message.id),
          run.timeLimit * 1000,
        );
      }
    } else if (message.type === FROM_WORKER.STREAM) {
      this.runs.get(message.id)?.onStream(message.name, message.text);
    } else if (message.type === FROM_WORKER.TRUNCATED) {
      this.runs.get(message.id)?.onStream("truncated", `${message.limit}`);
    } else if (message.type === FROM_WORKER.DOWNLOADS) {
      this.countDownloads(message.entries);
    } else if (message.type === FROM_WORKER.CRASHED) {
      this.restart(`Python crashed: ${message.message}`);
    } else if (message.type === FROM_WORKER.RESULT) {
      this.finish(message.id, message.result);
    }
  }

  finish(id, result) {
    const run = this.runs.get(id);
    if (!run) return;
    clearTimeout(run.limitTimer);
    run.stopping?.();
    this.runs.delete(id);
    if (this.current === id) this.current = null;
    // A Stop that arrived as this run ended must not hit the next one.
    if (this.interrupt && this.current === null) Atomics.store(this.interrupt, 0, 0);
    if (run.why && result.error_type === "KeyboardInterrupt") result.stopped = run.why;
    run.resolve(result);
  }

  /**
   * Run a cell. `onStream(name, text)` receives stdout/stderr as it arrives; the promise resolves
   * with the kernel's result object. After `timeLimit` seconds (default: the lesson's) the cell
   * is stopped. `controls`: the values of the cell's controls (`promptdojo.ui`), by name.
   */
  run(code, { key, cellId, onStream = () => {}, timeLimit, internal = false, controls }) {
    timeLimit ??= this.config.timeLimit;
    const id = this.nextId++;
    if (this.failedWhy) return Promise.resolve(notStartedResult(this.failedWhy));
    const message = { type: TO_WORKER.RUN, id, code, key, cellId, controls };
    return new Promise((resolve) => {
      this.runs.set(id, { resolve, onStream, cellId, timeLimit, internal, message });
      this.worker.postMessage(message);
    });
  }

  /** True while a cell is running or queued. */
  get busy() {
    return this.runs.size > 0;
  }

  /** True while this worker's Python is ready: its last boot phase said so. */
  get ready() {
    const said = this.phases.map(([phase]) => phase).filter((phase) => phase !== "progress");
    return said.at(-1) === "ready";
  }

  /** Call `listener()` each time Python is ready: now, if it is, and after every restart. */
  onReady(listener) {
    this.addPhaseListener((phase) => {
      if (phase === "ready") listener();
    });
  }

  /** Whether a Stop can interrupt Python here; without shared memory it replaces the worker. */
  get canInterrupt() {
    return this.interrupt != null;
  }

  /** Whether a run the learner asked for (not a setup cell or a replay) is running or queued. */
  hasLearnerRun() {
    return this.lastLearnerRun() !== undefined;
  }

  /**
   * Stop the learner's run of cell `cellId`, running or queued (`stop`); returns false when it
   * has none.
   */
  stopCell(cellId, why) {
    for (const [id, run] of this.runs) {
      if (run.cellId === cellId && !run.internal) {
        this.stop(why, id);
        return true;
      }
    }
    return false;
  }

  /**
   * Stop the running cell (or, while Python boots, the last queued one) by the one stop rule
   * (shared/stopper.js): interrupt first, and replace the worker if the cell has not ended in time.
   */
  stop(why = "you pressed Stop", id = this.current ?? this.lastLearnerRun()) {
    const run = this.runs.get(id);
    if (!run || run.stopping) return;
    run.why = why;
    performance.mark("pd:stop");
    if (this.current != null && this.current !== id) {
      // Another cell (a setup or replay) is running; ours waits in the queue: just skip it.
      this.worker.postMessage({ type: TO_WORKER.CANCEL, id });
      return;
    }
    // Interrupt even if the worker has not reported the run as started: it may be starting
    // right now. A queued run is also cancelled outright.
    if (this.current !== id) this.worker.postMessage({ type: TO_WORKER.CANCEL, id });
    run.stopping = escalateStop({
      buffer: this.interrupt,
      graceMs: this.config.stopGraceMs,
      windDownMs: this.config.stopWindDownMs,
      giveUp: (gaveUp) => this.gaveUp(id, gaveUp),
    });
  }

  /** The stop rule gave up on run `id` (`GAVE_UP`): replace the worker, saying why. */
  gaveUp(id, why) {
    const run = this.runs.get(id);
    if (!run) return;
    if (why === GAVE_UP.NO_INTERRUPT) {
      // No shared memory (features.js): no interrupt was sent.
      this.restart(`${run.why}, and this page cannot interrupt Python`);
      return;
    }
    this.restart(`the cell did not stop after ${run.why.replace(/^you /, "you had ")}`);
  }

  /** The newest run the learner started (not a setup cell or a replay). */
  lastLearnerRun() {
    const ids = [...this.runs].filter(([, run]) => !run.internal).map(([id]) => id);
    return ids.length ? Math.max(...ids) : undefined;
  }

  /** Replace the worker; every pending run ends with a `KernelRestarted` result. */
  restart(reason) {
    this.worker.terminate();
    for (const id of [...this.runs.keys()]) {
      this.finish(id, restartedResult(reason));
    }
    if (this.interrupt) Atomics.store(this.interrupt, 0, 0);
    this.current = null;
    this.phases = [];
    this.phaseTimes = [];
    this.downloads = new Map();
    // At once, before anyone reads the old worker's "ready": the new worker reports its own.
    this.onPhase("restarting", { reason });
    this.start();
    for (const listener of this.restartListeners) listener(reason);
  }
}
