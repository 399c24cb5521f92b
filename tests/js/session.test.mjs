// session.js: setup once per step, replay after a crash, a clean slate on Restart, and a Stop
// pressed while the setup runs.
import assert from "node:assert/strict";
import { test } from "node:test";
import { KernelSession } from "../../static/js/page/session.js";
import { FakeKernel } from "./fake_kernel.mjs";

const SETUP = [{ id: "setup", code: "s = 1" }];

test("a step's setup runs once, before its first cell", async () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  const step = session.enter("l/1", SETUP);
  await step.runCell("a", "a = 1", {});
  await step.runCell("b", "b = 1", {});
  assert.deepEqual(
    kernel.runs.map((r) => [r.cellId, r.internal]),
    [
      ["setup", true],
      ["a", false],
      ["b", false],
    ],
  );
});

test("after a crash, the current step's setup and good cells replay; other steps start over", async () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  const other = session.enter("l/1", SETUP);
  await other.runCell("x", "x = 1", {});
  const step = session.enter("l/2", SETUP);
  await step.runCell("a", "a = 1", {});
  await step.runCell("bad", "raise ValueError", {});
  kernel.runs = [];
  kernel.restart("Python crashed: boom");
  await step.runCell("b", "b = 1", {});
  assert.deepEqual(
    kernel.runs.map((r) => r.cellId),
    ["setup", "a", "b"],
  );
  assert.equal(session.restartNote, "Python was restarted (Python crashed: boom); replayed 1 earlier cell(s).");
  assert.deepEqual([...session.states.keys()], ["l/2"]);
});

test("Restart Python replays nothing and every step starts fresh", async () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  const step = session.enter("l/1", SETUP);
  await step.runCell("a", "a = 1", {});
  kernel.runs = [];
  session.restart();
  assert.deepEqual(kernel.runs, []);
  assert.equal(session.restartNote, "Python was restarted: every step starts fresh.");
  await step.runCell("b", "b = 1", {});
  assert.deepEqual(
    kernel.runs.map((r) => r.cellId),
    ["setup", "b"],
  );
});

test("Stop while the setup runs stops the cell before it starts", async () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  const step = session.enter("l/1", SETUP);
  kernel.hold = true;
  const run = step.runCell("a", "a = 1", {});
  await Promise.resolve();
  session.requestStop();
  assert.deepEqual(kernel.stopped, [], "nothing in the kernel to stop yet");
  kernel.release();
  assert.deepEqual(await run, { ok: false, stopped: "you pressed Stop", notStarted: true });
  assert.deepEqual(
    kernel.runs.map((r) => r.cellId),
    ["setup"],
  );
  assert.equal((await step.runCell("a", "a = 1", {})).ok, true, "the Stop was that run's only");
  assert.equal(session.stopCount(), 1);
});

test("Stop with nothing waiting is not remembered for the next run", async () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  session.requestStop();
  const step = session.enter("l/1", []);
  assert.equal((await step.runCell("a", "a = 1", {})).ok, true);
});

test("a failed setup is shown, with its cause, in every cell the learner runs", async () => {
  const kernel = new FakeKernel();
  const realRun = kernel.run.bind(kernel);
  kernel.run = (code, options) => {
    if (options.cellId !== "imports") return realRun(code, options);
    kernel.runs.push({ code, key: options.key, cellId: options.cellId, internal: options.internal });
    return Promise.resolve({
      ok: false,
      error_type: "ModuleNotFoundError",
      error_message: "numpy is not available",
      traceback: "ModuleNotFoundError: numpy is not available: run `promptdojo pyodide fetch numpy`\n",
    });
  };
  const session = new KernelSession(kernel);
  const step = session.enter("l/1", [{ id: "imports", code: "import numpy" }]);
  const first = await step.runCell("a", "compare_distributions()", {});
  const second = await step.runCell("b", "b = 1", {});
  for (const result of [first, second]) {
    assert.equal(result.setupFailures.length, 1);
    assert.equal(result.setupFailures[0].cellId, "imports");
    assert.match(result.setupFailures[0].text, /setup \(hidden cell “imports”\) failed/);
    assert.match(result.setupFailures[0].text, /numpy is not available: run `promptdojo pyodide fetch numpy`/);
  }
  assert.equal(second.ok, true, "the learner's own result is kept");
  const clean = session.enter("l/2", SETUP);
  assert.equal((await clean.runCell("c", "c = 1", {})).setupFailures, undefined);
});

test("a control change interrupts that cell's run only, and never without an interrupt", () => {
  const kernel = new FakeKernel();
  kernel.learnerRuns = new Set(["a", "b"]);
  const session = new KernelSession(kernel);
  assert.equal(session.interruptCell("b", "a control changed"), true);
  assert.deepEqual(kernel.stopped, [["a control changed", "b"]]);
  kernel.canInterrupt = false; // stopping would replace the worker: let the run finish instead
  assert.equal(session.interruptCell("a", "a control changed"), false);
  assert.equal(kernel.stopped.length, 1);
});

test("a control change on a cell waiting for its setup stops that cell's run, not another's", async () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  const step = session.enter("l/1", SETUP);
  kernel.hold = true;
  const a = step.runCell("a", "a = 1", {});
  const b = step.runCell("b", "b = 1", {});
  await Promise.resolve();
  assert.equal(session.interruptCell("a", "a control changed"), true);
  kernel.release();
  assert.deepEqual(await a, { ok: false, stopped: "a control changed", notStarted: true });
  assert.equal((await b).ok, true);
  assert.deepEqual(
    kernel.runs.map((r) => r.cellId),
    ["setup", "b"],
  );
});

test("runs are taken once Python has been ready, also while a replaced worker boots", () => {
  const kernel = new FakeKernel();
  const session = new KernelSession(kernel);
  const heard = [];
  session.onReady(() => heard.push(session.runnable));
  assert.equal(session.runnable, false);
  kernel.becomeReady();
  assert.equal(session.runnable, true);
  kernel.restart("Python crashed: boom");
  assert.equal(kernel.ready, false);
  assert.equal(session.runnable, true, "the new worker queues the run");
  kernel.becomeReady();
  assert.deepEqual(heard, [true, true]);
});
