// Making a memory snapshot: Pyodide with the learner library installed and the kernel imported,
// its free heap zeroed. The Node script behind `promptdojo pyodide snapshot` calls `makeSnapshot`
// through boot.js; pages restore what it made (interpreter.js, `restore`).
import { installLibrary } from "./library.js";
import {
  catchModule,
  librariesOf,
  loadLibrariesEarly,
  openedLibraries,
} from "./snapshot-packages.js";
import { unzipArchive, writeWheels } from "./wheels.js";

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
 * zeroed, and no JavaScript object held by Python. With `stdLibURL`, the standard library is that
 * archive, not the core's: a page restores the snapshot with the same one (Python's zip importer
 * holds its members' offsets). Returns `{bytes, packages}`: Pyodide's bytes (`packSnapshot` makes
 * them the file pages fetch), and null or what a page needs to restore the packages in it.
 *
 * With `packages` (`{prepared, folder, imports}`: prepared wheels, wheels.js, whose libraries go
 * into `folder`, and the modules to import), their libraries are loaded before the runtime
 * starts (snapshot-packages.js) and `imports` imported: a page restores them with it.
 */
export async function makeSnapshot({ loadPyodide, indexURL, stdLibURL }, bundle, packages = null) {
  const early =
    packages && loadLibrariesEarly(packages.prepared, packages.folder, null, catchModule());
  const pyodide = await loadPyodide({
    indexURL,
    ...(stdLibURL ? { stdLibURL } : {}),
    ...(early ? { fsInit: early.fsInit } : {}),
    _makeSnapshot: true,
  });
  if (early?.failure()) throw early.failure();
  installLibrary(pyodide, await unzipArchive(new Uint8Array(bundle), "the learner bundle"));
  const record = packages ? await withPackages(pyodide, packages, early.layout) : null;
  pyodide.runPython(SNAPSHOT_IMPORTS);
  if (record) record.opened = openedLibraries(pyodide);
  zeroFreeHeap(pyodide._module);
  // Pyodide's snapshot expects its list of loaded packages empty (it checks what Python holds of
  // JavaScript); a page that restores the packages lists them again.
  for (const name of record?.packages ?? []) delete pyodide.loadedPackages[name];
  return { bytes: pyodide.makeMemorySnapshot(), packages: record };
}

/** Write the packages' files into a boot that loaded their libraries, import `imports`. */
async function withPackages(pyodide, { prepared, folder, imports }, layout) {
  const wheels = await prepared;
  const { layout: libraries } = librariesOf(wheels, folder);
  const installed = pyodide._api.package_loader.get_install_dir("site");
  if (installed !== folder) throw new Error(`site-packages is ${installed}, not ${folder}`);
  writeWheels(pyodide, wheels);
  const module = pyodide.pyimport("promptdojo.kernel_warm_up");
  let done = [];
  try {
    const imported = module.import_modules(imports);
    done = imported.toJs(); // one that fails is left to the page, which imports it after
    imported.destroy();
  } finally {
    module.destroy();
  }
  // A typical cell run once with them: what Python sets up on its first calls comes restored.
  pyodide.runPython(`import promptdojo.kernel\npromptdojo.kernel.Kernel().warm_up(numpy=True)`);
  return {
    packages: wheels.map((wheel) => wheel.name),
    wheels: wheels.map((wheel) => [wheel.file_name, wheel.sha256]),
    folder,
    libraries,
    imports: done,
    ...layout,
  };
}
