// boot.js in the pinned Pyodide (314.0.7, from node_modules): what a snapshot is made of.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { zeroFreeHeap } from "../../static/js/boot.js";

const require = createRequire(import.meta.url);
const core = path.dirname(require.resolve("pyodide/package.json")) + path.sep;
const MB = 1 << 20;

let module;
before(async () => {
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  module = (await loadPyodide({ indexURL: core, _makeSnapshot: true }))._module;
});

/** How many bytes in `[start, end)` of the heap hold `value`. */
function count(start, end, value) {
  return module.HEAPU8.subarray(start, end).reduce((n, byte) => n + (byte === value), 0);
}

test("the free heap is zeroed: a freed block's old bytes do not reach the snapshot", () => {
  const block = module._emscripten_builtin_malloc(MB);
  module.HEAPU8.fill(0xab, block, block + MB);
  module._emscripten_builtin_free(block); // free() leaves the bytes where they were
  assert.ok(count(block, block + MB, 0xab) > MB - 64);
  const footprint = module._malloc_footprint();

  assert.ok(zeroFreeHeap(module) >= MB);
  // Only the allocator's own bookkeeping (a few words at each free chunk's start) is left.
  assert.equal(count(block, block + MB, 0xab), 0);
  assert.equal(module._malloc_footprint(), footprint, "the heap did not grow");
  assert.equal(module._malloc_footprint_limit() >>> 0, 0xffffffff, "no cap is left behind");
  // The interpreter goes on as before, and the allocator hands out memory beyond the old cap.
  const big = module._emscripten_builtin_malloc(64 * MB);
  assert.ok(big);
  module._emscripten_builtin_free(big);
});

test("a build without the allocator calls is left alone", () => {
  assert.equal(zeroFreeHeap({ HEAPU8: new Uint8Array(16) }), 0);
});
