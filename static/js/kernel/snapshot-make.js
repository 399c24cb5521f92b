// Making a memory snapshot: Pyodide with the learner library installed and the kernel imported,
// its free heap zeroed. The Node script behind `promptdojo pyodide snapshot` calls `makeSnapshot`
// through boot.js; pages restore what it made (boot.js, `restore`).
import { installLibrary } from "./library.js";
import { unzipArchive } from "./wheels.js";

/**
 * What a snapshot has imported: the kernel; `importlib.metadata`, which installing a package
 * imports (`importlib.invalidate_caches`) and would otherwise cost a page a fraction of a second
 * after the restore; and the standard library modules numpy and the learner library import.
 * Pyodide's standard library is source: each of those a page imports after the restore is
 * compiled and run on every boot, a fraction of a second in Chromium and more in WebKit, whose
 * cold interpreter runs slower (tests/pyodide/test_snapshot.py names any missing here).
 */
const SNAPSHOT_IMPORTS = `
import promptdojo.kernel
import importlib.metadata
import base64, ctypes, datetime, hashlib, hmac, numbers, pickle, platform, secrets
import gc
gc.collect()
`;

/** What `zeroFreeHeap` calls: Emscripten's dlmalloc, as both pinned builds export it. */
const ALLOCATOR = [
  "_emscripten_builtin_malloc",
  "_emscripten_builtin_free",
  "_malloc_usable_size",
  "_malloc_footprint",
  "_malloc_footprint_limit",
  "_malloc_set_footprint_limit",
];

/**
 * Zero the memory the C allocator holds free, in Pyodide's Emscripten `module`; returns how many
 * bytes were zeroed (0 where the build lacks the calls). Freed blocks keep the bytes they held,
 * and a snapshot carries every page that is not all zeros: after start-up and the imports, some
 * megabytes of the heap are free, most of them in whole pages (`make build` prints the size).
 * With the heap capped at its current size, every free block is allocated, zeroed and freed
 * again, largest first: nothing in use is touched, the heap does not grow, and the same
 * interpreter gives the same bytes.
 */
export function zeroFreeHeap(module) {
  if (!ALLOCATOR.every((name) => typeof module[name] === "function")) return 0;
  const limit = module._malloc_footprint_limit();
  module._malloc_set_footprint_limit(module._malloc_footprint());
  const blocks = [];
  let zeroed = 0;
  try {
    const malloc = (size) => module._emscripten_builtin_malloc(size);
    for (let size = 1 << 24; size >= 8; size >>>= 1) {
      for (let block = malloc(size); block; block = malloc(size)) {
        const length = module._malloc_usable_size(block);
        module.HEAPU8.fill(0, block, block + length);
        zeroed += length;
        blocks.push(block);
      }
    }
  } finally {
    for (const block of blocks) module._emscripten_builtin_free(block);
    module._malloc_set_footprint_limit(limit);
  }
  return zeroed;
}

/**
 * Make a memory snapshot (Pyodide's private `_makeSnapshot` / `makeMemorySnapshot`): the
 * interpreter with the learner bundle installed and `promptdojo.kernel` imported, its free heap
 * zeroed. No package is loaded (Pyodide cannot snapshot after loading one with native code), and
 * no JavaScript object is held by Python. Returns Pyodide's bytes (`packSnapshot` makes them the
 * file pages fetch). With `stdLibURL`, the standard library is that archive, not the core's: a
 * page restores the snapshot with the same one (Python's zip importer holds its members' offsets).
 */
export async function makeSnapshot({ loadPyodide, indexURL, stdLibURL }, bundle) {
  const pyodide = await loadPyodide({
    indexURL,
    ...(stdLibURL ? { stdLibURL } : {}),
    _makeSnapshot: true,
  });
  installLibrary(pyodide, await unzipArchive(new Uint8Array(bundle), "the learner bundle"));
  pyodide.runPython(SNAPSHOT_IMPORTS);
  zeroFreeHeap(pyodide._module);
  return pyodide.makeMemorySnapshot();
}
