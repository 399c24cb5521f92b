// The one stop rule (shared/stopper.js), which the page's kernel client and the Node check share:
// SIGINT at once; give up when Python never took it, or took it and did not end in time; give up
// at once without a buffer; nothing after the caller cancels.
import assert from "node:assert/strict";
import { afterEach, beforeEach, mock, test } from "node:test";
import { escalateStop, GAVE_UP, SIGINT } from "../../static/js/shared/stopper.js";

const GRACE = 1500;
const WIND_DOWN = 5000;

beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
afterEach(() => mock.timers.reset());

function started(buffer) {
  const gaveUp = [];
  const cancel = escalateStop({
    buffer,
    graceMs: GRACE,
    windDownMs: WIND_DOWN,
    giveUp: (why) => gaveUp.push(why),
  });
  return { gaveUp, cancel };
}

test("SIGINT goes into the buffer at once, and a cell that ends in the grace period is left be", () => {
  const buffer = new Int32Array(new SharedArrayBuffer(4));
  const { gaveUp, cancel } = started(buffer);
  assert.equal(Atomics.load(buffer, 0), SIGINT);
  mock.timers.tick(GRACE - 1);
  Atomics.store(buffer, 0, 0); // Python took it…
  cancel(); // …and the cell ended
  mock.timers.tick(GRACE + WIND_DOWN);
  assert.deepEqual(gaveUp, []);
});

test("an interrupt Python never takes is given up on when the grace period ends, once", () => {
  const buffer = new Int32Array(new SharedArrayBuffer(4));
  const { gaveUp } = started(buffer);
  mock.timers.tick(GRACE - 1);
  assert.deepEqual(gaveUp, []);
  mock.timers.tick(1);
  assert.deepEqual(gaveUp, [GAVE_UP.NOT_TAKEN]);
  mock.timers.tick(WIND_DOWN * 2);
  assert.deepEqual(gaveUp, [GAVE_UP.NOT_TAKEN]);
});

test("a cell that took the interrupt gets the wind-down period, and no more", () => {
  const buffer = new Int32Array(new SharedArrayBuffer(4));
  const { gaveUp } = started(buffer);
  Atomics.store(buffer, 0, 0); // Python clears the buffer as it takes the signal
  mock.timers.tick(GRACE);
  assert.deepEqual(gaveUp, [], "taken: it is winding down");
  mock.timers.tick(WIND_DOWN - 1);
  assert.deepEqual(gaveUp, []);
  mock.timers.tick(1);
  assert.deepEqual(gaveUp, [GAVE_UP.WOUND_DOWN]);
});

test("a cell that ends while it winds down is left be", () => {
  const buffer = new Int32Array(new SharedArrayBuffer(4));
  const { gaveUp, cancel } = started(buffer);
  Atomics.store(buffer, 0, 0);
  mock.timers.tick(GRACE + WIND_DOWN - 1);
  cancel();
  mock.timers.tick(WIND_DOWN);
  assert.deepEqual(gaveUp, []);
});

test("without a buffer nothing can be interrupted: the rule gives up on the next turn, not inside the call", () => {
  const { gaveUp } = started(null);
  assert.deepEqual(gaveUp, [], "not synchronously: the caller finishes its own bookkeeping first");
  mock.timers.tick(0);
  assert.deepEqual(gaveUp, [GAVE_UP.NO_INTERRUPT]);
});

test("a cancel that comes as the timer fires still wins", () => {
  // Timers due at the same tick run in order: the cell's end (cancel) was queued first.
  const buffer = new Int32Array(new SharedArrayBuffer(4));
  let gaveUp = 0;
  let cancel = () => {};
  setTimeout(() => cancel(), GRACE);
  cancel = escalateStop({ buffer, graceMs: GRACE, windDownMs: WIND_DOWN, giveUp: () => gaveUp++ });
  mock.timers.tick(GRACE + WIND_DOWN);
  assert.equal(gaveUp, 0);
});
