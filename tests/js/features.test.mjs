// Feature detection: an isolated page without SharedArrayBuffer (WebKitGTK as shipped) still gets
// a kernel, whose Stop replaces the worker; a browser that cannot start the worker says so; a
// boot that never gets ready says what it waits for.
import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";
import {
  KernelClient,
  SILENT_AFTER_SCRIPT_MS,
  SILENT_WORKER_MS,
} from "../../static/js/page/kernel-client.js";
import { showKernelStatus, waitingText } from "../../static/js/page/status.js";
import { FakeElement } from "./fake_dom.mjs";
import { CONFIG, FakeWorker as SilentWorker, savedGlobals } from "./fake_worker.mjs";

let restoreGlobals = () => {};

beforeEach(() => {
  restoreGlobals = savedGlobals([
    "Worker",
    "SharedArrayBuffer",
    "crossOriginIsolated",
    "document",
    "location",
    "PerformanceObserver",
  ]);
  SilentWorker.made = [];
  globalThis.Worker = SilentWorker;
  globalThis.document = { querySelector: () => null };
  mock.timers.enable({ apis: ["setTimeout"] });
});

afterEach(() => {
  restoreGlobals();
  mock.timers.reset();
});

test("an isolated page without SharedArrayBuffer starts Python, and Stop replaces the worker", () => {
  globalThis.crossOriginIsolated = true;
  delete globalThis.SharedArrayBuffer;
  const kernel = new KernelClient(CONFIG);
  assert.equal(kernel.interrupt, null);
  assert.equal(SilentWorker.made.length, 1);
  assert.equal(SilentWorker.made[0].messages[0].interrupt, null);

  const result = kernel.run("while True: pass", {});
  kernel.stop();
  mock.timers.tick(0);
  assert.equal(SilentWorker.made[0].terminated, true);
  assert.equal(SilentWorker.made.length, 2, "a fresh worker replaced the stuck one");
  return result.then((r) => assert.match(r.traceback ?? r.error ?? JSON.stringify(r), /interrupt/));
});

test("an isolated page with SharedArrayBuffer still interrupts Python", () => {
  globalThis.crossOriginIsolated = true;
  const kernel = new KernelClient(CONFIG);
  assert.ok(kernel.interrupt instanceof Int32Array);
  assert.ok(kernel.interrupt.buffer instanceof SharedArrayBuffer);
});

test("a browser that cannot start a module worker gets an error phase, not a silent page", () => {
  globalThis.Worker = class {
    constructor() {
      throw new TypeError("Module scripts are not supported in workers");
    }
  };
  const kernel = new KernelClient(CONFIG);
  const phases = [];
  kernel.addPhaseListener((phase, detail) => phases.push([phase, detail.message]));
  assert.deepEqual(phases.at(-1)[0], "error");
  assert.match(phases.at(-1)[1], /cannot start the Python worker \(Module scripts/);
});

test("a worker that says nothing is replaced, and the runs waiting for it go to the new one", () => {
  const kernel = new KernelClient(CONFIG);
  const first = kernel.run("1 + 1", { cellId: "a" });
  kernel.run("2 + 2", { cellId: "b" });
  mock.timers.tick(SILENT_WORKER_MS - 1);
  assert.equal(SilentWorker.made.length, 1, "not before its time");
  mock.timers.tick(1);
  const [silent, fresh] = SilentWorker.made;
  assert.equal(silent.terminated, true);
  assert.ok(fresh, "a new worker was started");
  assert.deepEqual(
    fresh.messages.map((m) => m.type ?? "boot"),
    ["boot", "run", "run"],
    "the new worker boots, then gets the waiting runs in their order",
  );
  assert.deepEqual(
    fresh.messages.slice(1).map((m) => m.cellId),
    ["a", "b"],
  );
  // The new worker answers the first run: the learner's promise gets its result.
  fresh.onmessage({ data: { type: "result", id: fresh.messages[1].id, result: { ok: 1 } } });
  return first.then((result) => assert.deepEqual(result, { ok: 1 }));
});

/** A PerformanceObserver whose entries the test hands over, as the page's resource timing would. */
class FakeObserver {
  static made = [];
  constructor(callback) {
    this.callback = callback;
    this.connected = false;
    FakeObserver.made.push(this);
  }
  observe() {
    this.connected = true;
  }
  disconnect() {
    this.connected = false;
  }
  /** Hand over resource entries to every observer still connected. */
  static arrive(...entries) {
    for (const o of FakeObserver.made.filter((o) => o.connected)) {
      o.callback({ getEntries: () => entries });
    }
  }
}

test("a silent worker is replaced soon after its script arrived, not only after the long wait", () => {
  globalThis.location = { href: "http://host/lessons/a/1" };
  FakeObserver.made = [];
  globalThis.PerformanceObserver = FakeObserver;
  const kernel = new KernelClient(CONFIG);
  const script = "http://host/lessons/a/worker.js";
  // Another file, and the worker's script fetched before this worker started, change nothing.
  FakeObserver.arrive(
    { name: "http://host/lessons/a/app.js", responseEnd: performance.now() },
    { name: script, responseEnd: -1 },
  );
  mock.timers.tick(SILENT_AFTER_SCRIPT_MS);
  assert.equal(SilentWorker.made.length, 1);
  FakeObserver.arrive({ name: script, responseEnd: performance.now() });
  mock.timers.tick(SILENT_AFTER_SCRIPT_MS - 1);
  assert.equal(SilentWorker.made.length, 1, "not before its time");
  mock.timers.tick(1);
  assert.equal(SilentWorker.made[0].terminated, true);
  assert.equal(SilentWorker.made.length, 2, "replaced 3 s after its script arrived");
  assert.ok(SILENT_AFTER_SCRIPT_MS * 5 < SILENT_WORKER_MS);
  // The new worker speaks: nothing more happens, however long it then takes.
  kernel.worker.onmessage({ data: { type: "phase", phase: "downloading", detail: {} } });
  FakeObserver.arrive({ name: script, responseEnd: performance.now() });
  mock.timers.tick(SILENT_WORKER_MS * 2);
  assert.equal(SilentWorker.made.length, 2);
  assert.equal(kernel.scriptObserver, null, "no observer is left watching for the script");
});

test("a page that heard late of the worker's script still gives the worker a second", () => {
  globalThis.location = { href: "http://host/lessons/a/1" };
  FakeObserver.made = [];
  globalThis.PerformanceObserver = FakeObserver;
  // The page's clock, set by hand: the worker starts at 10 s, its script arrives at 12 s, and
  // the page's thread hears of it only at 20 s.
  let now = 10_000;
  Object.defineProperty(performance, "now", { value: () => now, configurable: true });
  try {
    new KernelClient(CONFIG);
    now = 20_000;
    FakeObserver.arrive({ name: "http://host/lessons/a/worker.js", responseEnd: 12_000 });
    mock.timers.tick(999);
    assert.equal(SilentWorker.made.length, 1, "its first message may be waiting behind");
    mock.timers.tick(1);
    assert.equal(SilentWorker.made.length, 2);
  } finally {
    delete performance.now; // the prototype's again
  }
});

test("a worker that has spoken is never replaced for being slow", () => {
  const kernel = new KernelClient(CONFIG);
  const [worker] = SilentWorker.made;
  worker.onmessage({ data: { type: "phase", phase: "downloading", detail: {} } });
  mock.timers.tick(SILENT_WORKER_MS * 10);
  assert.equal(SilentWorker.made.length, 1);
  assert.equal(worker.terminated, false);
  assert.equal(kernel.phases.at(-1)[0], "downloading");
});

test("a silent early worker (the page's inline script's) is replaced by the client's own", () => {
  const early = new SilentWorker("worker.js", { type: "module" });
  globalThis.promptdojoEarlyKernel = { config: CONFIG, worker: early, interrupt: null, events: [] };
  try {
    const kernel = new KernelClient(CONFIG);
    assert.equal(kernel.startedEarly, true);
    assert.equal(early.onmessage !== undefined, true);
    mock.timers.tick(SILENT_WORKER_MS);
    assert.equal(early.terminated, true);
    assert.equal(kernel.startedEarly, false);
    assert.equal(kernel.worker, SilentWorker.made.at(-1));
    assert.equal(kernel.worker.messages[0].config, CONFIG, "the client's worker gets the boot");
  } finally {
    delete globalThis.promptdojoEarlyKernel;
  }
});

test("runs waiting for a Python that fails to start end, saying why, until it is restarted", async () => {
  const kernel = new KernelClient(CONFIG);
  const waiting = kernel.run("1", { cellId: "a" });
  SilentWorker.made[0].onmessage({ data: { type: "fatal", message: "the snapshot is damaged" } });
  const result = await waiting;
  assert.equal(result.error_type, "KernelNotStarted");
  assert.match(result.traceback, /Python did not start: the snapshot is damaged/);
  assert.equal(kernel.busy, false);
  const later = await kernel.run("2", { cellId: "b" });
  assert.equal(later.error_type, "KernelNotStarted", "a run asked for afterwards ends at once");
  assert.equal(SilentWorker.made[0].messages.length, 2, "only the boot and the first run were sent");

  kernel.restart("you pressed Restart Python");
  const again = kernel.run("3", { cellId: "c" });
  const fresh = SilentWorker.made.at(-1);
  assert.equal(fresh.messages.at(-1).cellId, "c", "after a restart, runs go to the new worker");
  fresh.onmessage({ data: { type: "result", id: fresh.messages.at(-1).id, result: { ok: 1 } } });
  assert.deepEqual(await again, { ok: 1 });
});

/** A kernel whose phases the test says, as the worker would. */
function fakeKernel(config) {
  const listeners = [];
  return {
    config,
    listeners,
    addPhaseListener: (listener) => listeners.push(listener),
    say: (phase, detail = {}) => listeners.forEach((listener) => listener(phase, detail)),
  };
}

test("a boot not ready after the patience limit says which phase it waits in, and the bytes", () => {
  const kernel = fakeKernel({ bootPatienceMs: 60000 });
  const status = new FakeElement("p");
  status.dataset = {};
  showKernelStatus(kernel, status, () => {});
  kernel.say("downloading");
  kernel.say("progress", { bytes: 3_400_000 });
  mock.timers.tick(59_999);
  assert.doesNotMatch(status.textContent, /not ready/);
  mock.timers.tick(1);
  assert.equal(status.textContent, waitingText("downloading", 3_400_000, 60));
  assert.match(status.textContent, /after 60 s: still waiting for Pyodide\x27s files .*3\.4 MB/);
  kernel.say("starting");
  assert.match(status.textContent, /still waiting for the interpreter to start/);
  kernel.say("ready");
  assert.equal(status.textContent, "Python: ready");
});

test("a boot that is ready in time never shows the waiting line", () => {
  const kernel = fakeKernel({ bootPatienceMs: 60000 });
  const status = new FakeElement("p");
  status.dataset = {};
  showKernelStatus(kernel, status, () => {});
  kernel.say("ready");
  mock.timers.tick(120_000);
  assert.equal(status.textContent, "Python: ready");
});
