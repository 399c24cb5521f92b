// Control values: what the worker lets through to Python, and how the store keeps them.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { FakeStorage } from "./fake_dom.mjs";

const { controlValuesProblem } = await import("../../static/js/shared/protocol.js");
// Limits as the kernel config gives them (Python's; tests/web/test_contract.py holds the config
// to them): small ones here, to see each one bite.
const LIMITS = { maxValues: 3, maxText: 5 };
const store = await import("../../static/js/page/store.js");

beforeEach(() => {
  globalThis.localStorage = new FakeStorage();
});

test("plain values pass; no values at all is fine", () => {
  assert.equal(controlValuesProblem(undefined, LIMITS), null);
  assert.equal(controlValuesProblem({ t: 0.5, model: "a", loud: true }, LIMITS), null);
});

test("anything but names to booleans, finite numbers or short texts is refused", () => {
  const bads = [null, [1], "x", { t: { code: "1" } }, { t: [1] }, { t: Number.NaN }];
  for (const bad of [...bads, { t: "x".repeat(LIMITS.maxText + 1) }]) {
    assert.match(String(controlValuesProblem(bad, LIMITS)), /control/, JSON.stringify(bad));
  }
  const names = [...Array(LIMITS.maxValues + 1).keys()];
  const many = Object.fromEntries(names.map((i) => [`c${i}`, i]));
  assert.match(controlValuesProblem(many, LIMITS), /at most/);
});

test("control values are saved per cell, and none removes the entry", () => {
  assert.deepEqual(store.loadControls("l", 1, "c"), {});
  store.saveControls("l", 1, "c", { t: 0.3 });
  assert.deepEqual(store.loadControls("l", 1, "c"), { t: 0.3 });
  store.saveControls("l", 1, "c", {});
  assert.equal(localStorage.getItem("promptdojo:v1:controls:l:1:c"), null);
});

test("an export carries control values and an import restores them, refusing non-values", () => {
  store.saveControls("l", 1, "c", { t: 0.3 });
  const exported = store.exportWork();
  assert.deepEqual(exported.items["controls:l:1:c"], { t: 0.3 });
  globalThis.localStorage = new FakeStorage();
  exported.items["controls:l:1:d"] = { t: { code: "x" } };
  store.importWork(JSON.stringify(exported));
  assert.deepEqual(store.loadControls("l", 1, "c"), { t: 0.3 });
  assert.equal(localStorage.getItem("promptdojo:v1:controls:l:1:d"), null);
});

/** Resolves at the next turn of the event loop, after timers of 0 ms. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * A live runner with no pause, counting the runs it starts and the interrupts it sends;
 * `state.inflight` is the run in flight (null when none), `state.finish()` ends it and
 * `state.fail()` ends it with an error.
 */
async function countedRunner() {
  const { liveRunner } = await import("../../static/js/page/controls.js");
  const state = { inflight: null, finish: null, executed: 0, interrupts: 0 };
  state.start = () => {
    state.inflight = new Promise((resolve, reject) => {
      state.finish = () => {
        state.inflight = null;
        resolve();
      };
      state.fail = () => {
        state.inflight = null;
        reject(new Error("the run failed"));
      };
    });
    state.inflight.catch(() => null); // the cell's own caller handles a failed run
  };
  const request = liveRunner({
    execute: async () => {
      state.executed += 1;
    },
    inflight: () => state.inflight,
    interrupt: () => {
      state.interrupts += 1;
    },
    delay: 0,
  });
  return { request, state };
}

test("rapid changes during a run interrupt it once and run once more, with no queue", async () => {
  const { request, state } = await countedRunner();
  state.start();
  for (let i = 0; i < 10; i++) request(); // debounced: one go
  while (state.interrupts === 0) await tick();
  request(); // arrives while the interrupted run winds down: folded into the run already due
  await tick();
  await tick();
  assert.equal(state.executed, 0); // nothing runs beside the interrupted run
  state.finish();
  while (state.executed === 0) await tick();
  await tick();
  assert.equal(state.interrupts, 1);
  assert.equal(state.executed, 1);
});

test("an explicit run cancels the re-run still due: it neither interrupts that run nor follows it", async () => {
  const { request, state } = await countedRunner();
  request();
  request.cancel(); // before the pause ends
  await tick();
  await tick();
  assert.equal(state.executed, 0);

  // Cancelled while it waits for the interrupted run to end: it does not run afterwards either.
  state.start();
  request();
  while (state.interrupts === 0) await tick();
  request.cancel();
  state.finish();
  await tick();
  await tick();
  assert.equal(state.executed, 0);
  request(); // and the next change re-runs as before
  while (state.executed === 0) await tick();
  assert.equal(state.executed, 1);
});

test("a run that fails while a re-run waits for it leaves the live re-run working", async () => {
  const { request, state } = await countedRunner();
  const ticks = async (n) => {
    for (let i = 0; i < n; i++) await tick();
  };
  state.start();
  request(); // waits for the running run, which then fails
  while (state.interrupts === 0) await tick();
  state.fail();
  await ticks(20);
  assert.equal(state.executed, 1);
  request(); // a later change is not taken for one already due
  await ticks(20);
  assert.equal(state.executed, 2);
});
