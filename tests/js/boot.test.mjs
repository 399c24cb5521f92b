// boot.js in the pinned Pyodide (314.0.7, from node_modules): what a snapshot is made of.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { loadFailureCause, zeroFreeHeap } from "../../static/js/kernel/boot.js";

const require = createRequire(import.meta.url);
const core = path.dirname(require.resolve("pyodide/package.json")) + path.sep;
const MB = 1 << 20;

let module;
before(async () => {
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  module = (await loadPyodide({ indexURL: core, _makeSnapshot: true }))._module;
});

/**
 * How many aligned 32-bit words of the heap in `[start, end)` are `byte` four times over. The
 * allocator's bookkeeping (sizes and addresses, all far below 0xabababab in this heap) never is;
 * counting single bytes would also count a bookkeeping word that happens to hold the byte.
 */
function words(start, end, byte) {
  const pattern = (byte * 0x01010101) >>> 0;
  const view = new Uint32Array(module.HEAPU8.buffer, start, (end - start) / 4);
  return view.reduce((n, word) => n + (word === pattern), 0);
}

test("the free heap is zeroed: a freed block's old bytes do not reach the snapshot", () => {
  const block = module._emscripten_builtin_malloc(MB);
  module.HEAPU8.fill(0xab, block, block + MB);
  module._emscripten_builtin_free(block); // free() leaves the bytes where they were
  assert.ok(words(block, block + MB, 0xab) > MB / 4 - 16);
  const footprint = module._malloc_footprint();

  assert.ok(zeroFreeHeap(module) >= MB);
  // Only the allocator's own bookkeeping (a few words at each free chunk's start) is written.
  assert.equal(words(block, block + MB, 0xab), 0);
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

test("a package that failed to load is reported with its cause, not Pyodide's heading", () => {
  const detail = [
    "Loading numpy",
    "Failed to load numpy",
    "The following error occurred while loading numpy:",
    "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl: 503 Service Unavailable",
  ].join("\n");
  assert.equal(
    loadFailureCause(detail, "numpy"),
    "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl: 503 Service Unavailable",
  );
  assert.equal(
    loadFailureCause("The following error occurred while loading numpy:\n", "numpy"),
    "numpy could not be loaded, and Pyodide said no more",
  );
});
