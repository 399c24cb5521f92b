// snapshot-file.js: the snapshot's file leaves out all-zero pages and gives back the same bytes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { packSnapshot, unpackSnapshot } from "../../static/js/kernel/snapshot-file.js";

function snapshot() {
  // 10 pages and a short last one: data, zeros, data across a page edge, zeros, data at the end.
  const bytes = new Uint8Array(10 * 4096 + 100);
  bytes.fill(7, 0, 4096);
  bytes.fill(9, 3 * 4096 - 5, 3 * 4096 + 5);
  bytes[bytes.length - 1] = 1;
  return bytes;
}

test("the file holds only the pages that are not all zeros, and unpacks to the same bytes", () => {
  const bytes = snapshot();
  const file = packSnapshot(bytes);
  // Pages 0, 2, 3 and the short page 10 are kept; header 20 bytes, 3 runs of 8 bytes.
  assert.equal(file.length, 20 + 3 * 8 + 3 * 4096 + 100);
  assert.deepEqual(unpackSnapshot(file), bytes);
  assert.deepEqual(unpackSnapshot(packSnapshot(new Uint8Array(8192))), new Uint8Array(8192));
});

test("a file that is not one, or whose runs do not fit, is damaged", () => {
  const file = packSnapshot(snapshot());
  assert.throws(() => unpackSnapshot(new Uint8Array(64)), /the snapshot is damaged: it is not/);
  assert.throws(() => unpackSnapshot(file.subarray(0, file.length - 1)), /run 2 is out of range/);
  const longer = new Uint8Array(file.length + 3);
  longer.set(file);
  assert.throws(() => unpackSnapshot(longer), /3 bytes follow its last run/);
  const runs = file.slice();
  new DataView(runs.buffer).setUint32(16, 1e6, true);
  assert.throws(() => unpackSnapshot(runs), /its 1000000 runs do not fit the file/);
});
