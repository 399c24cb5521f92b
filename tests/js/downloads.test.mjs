// The download worker's results cross to the kernel worker moved, not copied: every ArrayBuffer
// under a result, once each (a buffer listed twice would make postMessage throw).
import assert from "node:assert/strict";
import test from "node:test";
import { transferables } from "../../static/js/downloads.js";

// The smallest valid WebAssembly module: its magic and version.
const EMPTY_MODULE = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);

test("every buffer under a prepared wheel is listed once, and compiled modules are left alone", () => {
  const archive = new ArrayBuffer(64);
  const own = new Uint8Array(8);
  const prepared = [
    {
      name: "numpy",
      files: {
        "a.py": new Uint8Array(archive, 0, 16),
        "b.py": new Uint8Array(archive, 16, 8),
        "c.so": own,
      },
      names: ["a.py", "b.py", "c.so"],
      libraries: [["c.so", new WebAssembly.Module(EMPTY_MODULE)]],
    },
  ];
  const found = transferables(prepared);
  assert.equal(found.length, 2);
  assert.ok(found.includes(archive));
  assert.ok(found.includes(own.buffer));
});

test("a snapshot's bytes are one buffer; nothing to move gives an empty list", () => {
  const snapshot = new Uint8Array(32);
  assert.deepEqual(transferables(snapshot), [snapshot.buffer]);
  assert.deepEqual(transferables(undefined), []);
  assert.deepEqual(transferables({ name: "x", count: 3 }), []);
});
