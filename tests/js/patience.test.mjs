// How long the boot waits for what has stopped moving (static/js/kernel/patience.js): a promise
// given a deadline, and what it gives after the deadline handed on (a late response's body is
// cancelled, which ends its request).
import assert from "node:assert/strict";
import test, { mock } from "node:test";
import { dropLate, within } from "../../static/js/kernel/patience.js";

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("a promise that settles in time gives its value, and the deadline is cleared", async () => {
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  try {
    let resolve;
    const waited = within(new Promise((r) => (resolve = r)), 1000, "too slow");
    mock.timers.tick(999);
    resolve("on time");
    assert.equal(await waited, "on time");
    mock.timers.tick(10_000); // no timer left to reject it
  } finally {
    mock.timers.reset();
  }
});

test("a promise that misses its deadline rejects, and what it gives later goes to late", async () => {
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  try {
    let resolve;
    const given = [];
    const waited = within(new Promise((r) => (resolve = r)), 1000, "no answer", (v) => given.push(v));
    mock.timers.tick(1000);
    await assert.rejects(waited, { message: "no answer" });
    resolve("too late");
    await settle();
    assert.deepEqual(given, ["too late"]);
  } finally {
    mock.timers.reset();
  }
});

test("a late response's body is cancelled; one without a body is let be", async () => {
  let cancelled = null;
  const body = new ReadableStream({ cancel: (why) => (cancelled = why ?? "cancelled") });
  dropLate(new Response(body));
  await settle();
  assert.equal(cancelled, "cancelled");
  dropLate(new Response(null, { status: 204 }));
  dropLate(undefined);
});
