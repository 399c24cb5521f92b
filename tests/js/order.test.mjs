// order.js: the cells above a pressed one that have not run are run first, in order, stopping at
// a failure; the session knows which cells ran in this worker; a NameError names the cell that
// defines the name.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  cellsNeeded,
  nameErrorHint,
  runEarlierFirst,
  undefinedName,
} from "../../static/js/page/order.js";
import { KernelSession } from "../../static/js/page/session.js";
import { FakeKernel as BaseKernel } from "./fake_kernel.mjs";

/** A kernel whose `stopped` cells end as stopped, and whose failures are an `X`. */
class FakeKernel extends BaseKernel {
  answer(code) {
    if (code === "stopped") return { ok: false, stopped: "you pressed Stop" };
    return { ok: !code.startsWith("raise"), error_type: "X", value: {} };
  }
}

/** Cells as step.js gives them: `{id, execute}`, executing through the step session. */
function cells(step, codes) {
  return Object.entries(codes).map(([id, code]) => {
    const execute = () => step.runCell(id, code, {});
    execute.inflight = null;
    return { id, execute };
  });
}

test("the cells above that have not run run first, in order; those that ran do not", async () => {
  const kernel = new KernelSession(new FakeKernel());
  const step = kernel.enter("l/1");
  const [a, b, c] = cells(step, { a: "x = 1", b: "y = 2", c: "x + y" });
  await b.execute();
  assert.deepEqual(await runEarlierFirst([a, b], step), ["a"]);
  assert.deepEqual(
    kernel.kernel.runs.map((run) => run.cellId),
    ["b", "a"],
  );
  assert.deepEqual(await runEarlierFirst([a, b], step), []);
  assert.equal(step.hasRun("c"), false);
  await c.execute();
  assert.equal(step.hasRun("c"), true);
});

test("a failing cell above stops the ones after it; it still counts as run", async () => {
  const kernel = new KernelSession(new FakeKernel());
  const step = kernel.enter("l/1");
  const earlier = cells(step, { a: "raise ValueError", b: "y = 2" });
  assert.deepEqual(await runEarlierFirst(earlier, step), ["a"]);
  assert.equal(step.hasRun("a"), true);
  assert.equal(step.hasRun("b"), false);
});

test("a stopped cell has not run; after a restart only the replayed cells have", async () => {
  const kernel = new KernelSession(new FakeKernel());
  const step = kernel.enter("l/1");
  const [a, b, spin] = cells(step, { a: "x = 1", b: "raise E", spin: "stopped" });
  await a.execute();
  await b.execute();
  await spin.execute();
  assert.equal(step.hasRun("spin"), false);
  kernel.replay("it crashed");
  assert.equal(step.hasRun("a"), true);
  assert.equal(step.hasRun("b"), false);
  kernel.restart();
  assert.equal(step.hasRun("a"), false);
});

test("a run in flight above is waited for, not started again", async () => {
  const kernel = new KernelSession(new FakeKernel());
  const step = kernel.enter("l/1");
  let release;
  const a = { id: "a", execute: () => assert.fail("started twice") };
  a.execute.inflight = new Promise((resolve) => (release = resolve));
  const ran = runEarlierFirst([a], step);
  release();
  assert.deepEqual(await ran, []);
});

test("a NameError names the cell that defines the name", () => {
  const error = (name) => ({
    ok: false,
    error_type: "NameError",
    error_message: `name '${name}' is not defined`,
  });
  const definitions = {
    draw_counts: { cell: "imports", step: 3, title: "Counts" },
    counter: { cell: "one", step: 1, title: "State" },
    own: { cell: "mine", step: 3, title: "Counts" },
    toString: undefined,
  };
  assert.equal(undefinedName(error("draw_counts")), "draw_counts");
  assert.equal(undefinedName({ ok: false, error_type: "ValueError", error_message: "x" }), null);
  assert.equal(
    nameErrorHint(error("draw_counts"), definitions, "plot", 3),
    "“draw_counts” is defined by this step's cell “imports”: run it first.",
  );
  assert.match(
    nameErrorHint(error("counter"), definitions, "plot", 3),
    /^“counter” is defined in step 1 \(“State”\), cell “one”: each step has its own/,
  );
  // Its own cell defines it (later in the cell), an unknown name, an inherited property: nothing.
  assert.equal(nameErrorHint(error("own"), definitions, "mine", 3), null);
  assert.equal(nameErrorHint(error("nowhere"), definitions, "plot", 3), null);
  assert.equal(nameErrorHint(error("constructor"), definitions, "plot", 3), null);
});

test("a run needs the cells above the server names for it, until a cell is edited", () => {
  const edits = new Set();
  const cells = ["data", "more", "size", "plot"].map((id) => ({ id, edited: () => edits.has(id) }));
  const needs = { data: [], more: ["data"], size: [], plot: ["data", "more"] };
  const ids = (index) => cellsNeeded(cells, index, needs).map((cell) => cell.id);
  assert.deepEqual(ids(2), []);
  assert.deepEqual(ids(3), ["data", "more"]);
  // The learner's code may read anything: an edit to the cell or one above brings them all.
  edits.add("size");
  assert.deepEqual(ids(2), ["data", "more"]);
  assert.deepEqual(ids(3), ["data", "more", "size"]);
  edits.clear();
  edits.add("data");
  assert.deepEqual(ids(2), ["data", "more"]);
  // Below an edited cell only: those above it are as written.
  edits.clear();
  edits.add("plot");
  assert.deepEqual(ids(2), []);
  // A step sent without needs (an older page's data): every cell above.
  assert.deepEqual(
    cellsNeeded(cells, 2, undefined).map((cell) => cell.id),
    ["data", "more"],
  );
});
