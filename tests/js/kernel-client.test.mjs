// The page's kernel client (page/kernel-client.js) against a fake Worker the test answers as the
// kernel worker would (shared/protocol.js): the queue, the time limit, cancelling a queued run,
// and the stop rule's two ends (an interrupt Python takes; a worker replaced when it does not).
import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";
import { KernelClient } from "../../static/js/page/kernel-client.js";
import { FROM_WORKER, interruptedResult, TO_WORKER } from "../../static/js/shared/protocol.js";
import { SIGINT } from "../../static/js/shared/stopper.js";
import { CONFIG, FakeWorker, savedGlobals } from "./fake_worker.mjs";

const GLOBALS = ["Worker", "crossOriginIsolated", "document", "PerformanceObserver"];
let restoreGlobals = () => {};
const ok = (value) => ({ ok: true, value: { "text/plain": value }, error_type: null });

beforeEach(() => {
  restoreGlobals = savedGlobals(GLOBALS);
  FakeWorker.made = [];
  globalThis.Worker = FakeWorker;
  globalThis.crossOriginIsolated = true; // with SharedArrayBuffer: an interrupt buffer
  globalThis.document = { querySelector: () => null };
  delete globalThis.PerformanceObserver;
  mock.timers.enable({ apis: ["setTimeout"] });
});

afterEach(() => {
  restoreGlobals();
  mock.timers.reset();
});

/** A client whose worker has booted, and that worker. */
function readyClient() {
  const kernel = new KernelClient(CONFIG);
  const worker = FakeWorker.made.at(-1);
  worker.say({ type: FROM_WORKER.PHASE, phase: "ready", detail: {} });
  return { kernel, worker };
}

test("runs queue in order, each result reaches its own caller, and busy holds until the last", async () => {
  const { kernel, worker } = readyClient();
  const first = kernel.run("1", { cellId: "a" });
  const second = kernel.run("2", { cellId: "b" });
  assert.deepEqual(worker.runs(), [1, 2]);
  assert.equal(kernel.busy, true);
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  worker.say({ type: FROM_WORKER.RESULT, id: 2, result: ok("2") });
  worker.say({ type: FROM_WORKER.RESULT, id: 1, result: ok("1") });
  assert.deepEqual(await Promise.all([first, second]), [ok("1"), ok("2")]);
  assert.equal(kernel.busy, false);
});

test("the time limit counts from the run's start in Python, not from the click", async () => {
  const { kernel, worker } = readyClient();
  const run = kernel.run("while True: pass", { cellId: "a", timeLimit: 2 });
  mock.timers.tick(10_000); // queued behind a slow boot: no limit yet
  assert.equal(Atomics.load(kernel.interrupt, 0), 0);
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  mock.timers.tick(1999);
  assert.equal(Atomics.load(kernel.interrupt, 0), 0);
  mock.timers.tick(1);
  assert.equal(Atomics.load(kernel.interrupt, 0), SIGINT, "past its limit: interrupted");
  Atomics.store(kernel.interrupt, 0, 0); // Python takes the interrupt…
  worker.say({ type: FROM_WORKER.RESULT, id: 1, result: interruptedResult() }); // …and ends
  const result = await run;
  assert.equal(result.stopped, "it ran past its time limit of 2 s");
  mock.timers.tick(CONFIG.stopGraceMs + CONFIG.stopWindDownMs);
  assert.equal(worker.terminated, false, "a cell that stopped keeps its worker");
  assert.equal(FakeWorker.made.length, 1);
});

test("Stop on a queued run cancels it in the worker and leaves the running one alone", () => {
  const { kernel, worker } = readyClient();
  kernel.run("setup()", { cellId: "setup", internal: true });
  kernel.run("2", { cellId: "b" });
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  kernel.stop("you pressed Stop", 2);
  assert.deepEqual(worker.messages.at(-1), { type: TO_WORKER.CANCEL, id: 2 });
  assert.equal(Atomics.load(kernel.interrupt, 0), 0, "the running setup is not interrupted");
  mock.timers.tick(CONFIG.stopGraceMs + CONFIG.stopWindDownMs);
  assert.equal(worker.terminated, false);
});

test("a cell that never takes the interrupt costs the worker: pending runs end, a new one boots", async () => {
  const { kernel, worker } = readyClient();
  const reasons = [];
  kernel.addRestartListener((reason) => reasons.push(reason));
  const stuck = kernel.run("time.sleep(1e9)", { cellId: "a" });
  const queued = kernel.run("2", { cellId: "b" });
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  kernel.stop();
  assert.equal(Atomics.load(kernel.interrupt, 0), SIGINT);
  mock.timers.tick(CONFIG.stopGraceMs - 1);
  assert.equal(worker.terminated, false);
  mock.timers.tick(1);
  assert.equal(worker.terminated, true);
  const why = "the cell did not stop after you had pressed Stop";
  for (const result of await Promise.all([stuck, queued])) {
    assert.equal(result.error_type, "KernelRestarted");
    assert.match(result.error_message, /did not stop/);
  }
  assert.deepEqual(reasons, [why]);
  assert.equal(FakeWorker.made.length, 2);
  assert.equal(FakeWorker.made[1].messages[0].config, CONFIG, "the new worker is booted");
  assert.equal(Atomics.load(kernel.interrupt, 0), 0, "the next run starts with a clear buffer");
  assert.deepEqual(kernel.phases.at(-1), ["restarting", { reason: why }]);
});

test("a cell that took the interrupt but does not end gets the wind-down, then the worker goes", async () => {
  const { kernel, worker } = readyClient();
  const run = kernel.run("try:\n  ...\nfinally:\n  slow()", { cellId: "a" });
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  kernel.stop();
  Atomics.store(kernel.interrupt, 0, 0); // taken
  // Two ticks: a timer set while the mock ticks counts from the tick's end, not from its own.
  mock.timers.tick(CONFIG.stopGraceMs);
  mock.timers.tick(CONFIG.stopWindDownMs - 1);
  assert.equal(worker.terminated, false, "winding down");
  mock.timers.tick(1);
  assert.equal(worker.terminated, true);
  assert.equal((await run).error_type, "KernelRestarted");
});

test("a second Stop while the cell winds down sends no second interrupt into its finally", () => {
  const { kernel, worker } = readyClient();
  kernel.run("try:\n  ...\nfinally:\n  tidy()", { cellId: "a" });
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  kernel.stop();
  Atomics.store(kernel.interrupt, 0, 0); // Python took it and runs the finally block
  mock.timers.tick(CONFIG.stopGraceMs - 1);
  kernel.stop(); // the learner presses again
  assert.equal(Atomics.load(kernel.interrupt, 0), 0, "the finally block is not interrupted");
  mock.timers.tick(1);
  mock.timers.tick(CONFIG.stopWindDownMs);
  assert.equal(FakeWorker.made.length, 2, "replaced once, when the first Stop's wind-down ended");
  mock.timers.tick(CONFIG.stopGraceMs * 4);
  assert.equal(FakeWorker.made.length, 2);
});

test("ready is this worker's: false while a replacement boots, and onReady hears each ready", () => {
  const kernel = new KernelClient(CONFIG);
  let heard = 0;
  kernel.onReady(() => heard++);
  assert.equal(kernel.ready, false);
  const first = FakeWorker.made[0];
  first.say({ type: FROM_WORKER.PHASE, phase: "ready", detail: {} });
  first.say({ type: FROM_WORKER.DOWNLOADS, entries: [["late.whl", 10]] }); // a "progress" phase
  assert.equal(kernel.ready, true, "a late progress report does not unready it");
  kernel.restart("you restarted it");
  assert.equal(kernel.ready, false);
  FakeWorker.made[1].say({ type: FROM_WORKER.PHASE, phase: "ready", detail: {} });
  assert.equal(kernel.ready, true);
  assert.equal(heard, 2);
  let late = 0;
  kernel.onReady(() => late++);
  assert.equal(late, 1, "a listener that comes after the ready hears it too");
});

test("stopCell stops the learner's run of that cell, never a setup run of the same name", () => {
  const { kernel, worker } = readyClient();
  kernel.run("setup()", { cellId: "a", internal: true });
  kernel.run("a()", { cellId: "a" });
  worker.say({ type: FROM_WORKER.STARTED, id: 1 });
  assert.equal(kernel.canInterrupt, true);
  assert.equal(kernel.hasLearnerRun(), true);
  assert.equal(kernel.stopCell("b", "a control changed"), false);
  assert.equal(kernel.stopCell("a", "a control changed"), true);
  assert.deepEqual(worker.messages.at(-1), { type: TO_WORKER.CANCEL, id: 2 });
  assert.equal(Atomics.load(kernel.interrupt, 0), 0, "the setup run goes on");
});
