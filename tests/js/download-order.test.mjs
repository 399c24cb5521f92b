// The order the boot's downloads end in (kernel/download-order.js): each next one starts once a
// share of the one before has come.
import assert from "node:assert/strict";
import test from "node:test";
import { counted, signal, whenShare } from "../../static/js/kernel/download-order.js";

test("a share's callback comes once, when the share has come", () => {
  const calls = [];
  const onBytes = whenShare(1000, 0.5, () => calls.push("then"));
  onBytes(499);
  assert.deepEqual(calls, []);
  onBytes(500);
  onBytes(900);
  onBytes(Infinity);
  assert.deepEqual(calls, ["then"]);
});

test("without a size there is nothing to wait for: the callback comes at once", () => {
  for (const size of [0, undefined, null]) {
    const calls = [];
    whenShare(size, 0.5, () => calls.push("then"));
    assert.deepEqual(calls, ["then"], String(size));
  }
});

test("a counted response passes its body on whole, counting as it is read", async () => {
  const seen = [];
  const body = new Uint8Array(300).map((_, i) => i % 256);
  const response = counted(new Response(body), (bytes) => seen.push(bytes));
  assert.deepEqual(new Uint8Array(await response.arrayBuffer()), body);
  assert.equal(seen.at(-1), 300);
  // An error status is passed on as it is, uncounted.
  const missing = new Response("gone", { status: 404 });
  assert.equal(counted(missing, () => seen.push("404")), missing);
});

test("a signal opens once, whoever opens it", async () => {
  const { opened, open } = signal();
  let done = false;
  opened.then(() => (done = true));
  await Promise.resolve();
  assert.equal(done, false);
  open();
  open();
  await opened;
  assert.equal(done, true);
});
