// Packages inside a memory snapshot: their shared libraries loaded where the snapshot expects them.
//
// Python objects of an imported package point into its shared libraries: at their data in the
// heap, and at their functions' slots in the table. A snapshot holds the heap, not the libraries.
// Loaded while Pyodide sets up its file system (`fsInit`, before the C runtime starts), Emscripten
// gives each library its data at the end of the static data, one after another, and its functions
// at the end of the table: the same addresses and slots on every boot that loads the same
// libraries in the same order. A snapshot made after such a boot, with the packages imported
// (snapshot-make.js), is restored after the same boot (interpreter.js); then only the packages'
// files and Emscripten's JavaScript records of the libraries are made again. Cloudflare's workerd
// restores its Python snapshots the same way.
//
// It relies on internals of the pinned Pyodide releases: the `fsInit` hook, Emscripten's
// `FS.createPreloadedFile` (its wasm plugin instantiates a library), `_module.GOT.__heap_base`,
// `_module.wasmTable`, `_module.LDSO`, `_module.loadDynamicLibrary` and Pyodide's module factory
// (`_createPyodideModule`). A snapshot whose libraries or layout differ from the page's is refused
// before its memory is restored: nothing runs in it.

import { withResolvedSetAside } from "./wheels.js";

/** The dylink.0 subsection of a library's memory and table needs (Emscripten's layout). */
const MEM_INFO = 1;

/** A library's memory and table needs: `[memorySize, memoryAlign, tableSize, tableAlign]`. */
export function libraryNeeds(module) {
  const [section] = WebAssembly.Module.customSections(module, "dylink.0");
  if (!section) throw new Error("a library without a dylink.0 section");
  const bytes = new Uint8Array(section);
  let at = 0;
  const leb = () => {
    let [value, scale] = [0, 1];
    for (;;) {
      const byte = bytes[at++];
      value += (byte & 127) * scale;
      if (!(byte & 128)) return value;
      scale *= 128;
    }
  };
  while (at < bytes.length) {
    const [type, size] = [bytes[at++], leb()];
    if (type === MEM_INFO) return [leb(), leb(), leb(), leb()];
    at += size;
  }
  return [0, 0, 0, 0];
}

/**
 * The libraries of prepared wheels (wheels.js `prepareWheel`) in load order, installed in
 * `folder`: `[path, needs]` each (`libraryNeeds`), and their compiled modules by path.
 */
export function librariesOf(prepared, folder) {
  const layout = [];
  const modules = new Map();
  for (const wheel of prepared) {
    if ((wheel.install_dir ?? "site") !== "site") {
      throw new Error(`${wheel.file_name} installs outside site-packages`);
    }
    for (const [name, module] of wheel.libraries) {
      const path = `${folder}/${name}`;
      layout.push([path, libraryNeeds(module)]);
      modules.set(path, module);
    }
  }
  return { layout, modules };
}

function preload(FS, path, module) {
  return new Promise((resolve, reject) => {
    const failed = () => reject(new Error(`${path} could not be instantiated`));
    // dontCreateFile: the files are written once Python is up (wheels.js writeWheel).
    FS.createPreloadedFile(path, undefined, module, true, false, resolve, failed, true);
  });
}

/** The module the next boot's Pyodide creates, once it has (`catchModule`). */
let catching = { module: null };

/**
 * Catch the Emscripten module of the next Pyodide boot: `{module}`, filled in as Pyodide calls its
 * module factory (the global `_createPyodideModule`, which its loader script sets) with the
 * object that becomes the module. Whether the script has run yet or not, the factory is wrapped.
 */
export function catchModule() {
  catching = { module: null };
  const plain = (value) => ({ value, writable: true, configurable: true, enumerable: true });
  const wrap = (factory) =>
    typeof factory !== "function"
      ? factory
      : function (settings) {
          catching.module = settings;
          Object.defineProperty(globalThis, "_createPyodideModule", plain(factory)); // once
          return factory.call(this, settings);
        };
  let factory = wrap(globalThis._createPyodideModule);
  Object.defineProperty(globalThis, "_createPyodideModule", {
    configurable: true,
    get: () => factory,
    set: (value) => (factory = wrap(value)),
  });
  return catching;
}

/** Table slots set aside before the libraries, beyond those a boot holds then: browsers differ. */
const TABLE_MARGIN = 4096;

/**
 * The first table slot of the libraries, for a boot whose table has `length` slots before them:
 * past a margin, and round, so that every browser's boot reaches it (WebKit's holds 636 more
 * slots than Chromium's or Node's at that point, for Pyodide 0.29).
 */
export function tableReserve(length) {
  return Math.ceil((length + TABLE_MARGIN) / 1024) * 1024;
}

/**
 * Load the libraries of `prepared` (a promise of prepared wheels) into `folder`, in order, before
 * the runtime starts, into the boot whose module `caught` catches (`catchModule`). Returns
 * `{fsInit, failure, layout}`: `fsInit`, Pyodide's hook that loads them; `failure()`, why that
 * failed, or null (Pyodide does not wait on its hook: the caller asks after); and `layout`,
 * filled in as they load: `heapBase`, the heap's end past their data, `tableReserve`, the slot
 * the table is grown to first (`expected`'s, or `tableReserve()`), and `tableBases`, each
 * library's first slot as the loader gave it. While they load, the offset table's resolved
 * entries are set aside (wheels.js `withResolvedSetAside`: Emscripten passes over all of them
 * after each library).
 *
 * With `expected` (a snapshot's record) and `snapshot` (the bytes Pyodide restores next, or a
 * promise of them), the libraries must be the record's (the same order and needs) and land where
 * it says; else the snapshot's bytes are spoilt, so that Pyodide refuses them before it restores
 * anything, and `failure()` says why.
 */
export function loadLibrariesEarly(prepared, folder, expected, caught, snapshot = null) {
  let failed = null;
  const layout = { heapBase: 0, tableReserve: 0, tableBases: [] };
  const fsInit = async (FS) => {
    try {
      const { layout: needs, modules } = librariesOf(await prepared, folder);
      if (expected && !same(needs, expected.libraries)) {
        throw new Error("the snapshot was made with other libraries than the page's packages");
      }
      const { GOT, wasmTable: table } = caught.module ?? {};
      if (!table) throw new Error("Pyodide's module could not be reached before it started");
      layout.tableReserve = expected?.tableReserve ?? tableReserve(table.length);
      if (table.length > layout.tableReserve) {
        throw new Error(`the table holds ${table.length} slots, past ${layout.tableReserve}`);
      }
      table.grow(layout.tableReserve - table.length);
      const named = needs.map(([path]) => [path, modules.get(path)]);
      await withResolvedSetAside(GOT, named, async () => {
        for (const [i, [path, module]] of named.entries()) {
          // The loader's tableBase: the table's end, or 0 for a library without slots.
          layout.tableBases.push(needs[i][1][2] ? table.length : 0);
          await preload(FS, path, module);
        }
      });
      layout.heapBase = GOT.__heap_base.value;
      if (expected) checkLayout(layout, expected);
    } catch (error) {
      failed = error;
      if (snapshot) spoil(await snapshot);
    }
  };
  return { fsInit, failure: () => failed, layout };
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** Throws unless the libraries sit where the snapshot's record says (heap end, table slots). */
function checkLayout(layout, record) {
  if (layout.heapBase !== record.heapBase || !same(layout.tableBases, record.tableBases)) {
    throw new Error(
      `the snapshot's libraries sit elsewhere (heap ${layout.heapBase}, made at ` +
        `${record.heapBase}; table slots from ${layout.tableBases}, made at ${record.tableBases})`,
    );
  }
}

/** Spoil a snapshot's first bytes (its magic number): Pyodide then refuses to restore it. */
function spoil(bytes) {
  new Uint8Array(bytes.buffer ?? bytes, bytes.byteOffset ?? 0, 4).fill(0);
}

/**
 * `record` (a snapshot's, from the kernel config) if it has every field a restore reads, of the
 * right kind, and opens only libraries it loads; else it throws.
 */
export function checkedRecord(record) {
  const arrays = ["packages", "imports", "libraries", "tableBases", "opened"];
  const numbers = ["heapBase", "tableReserve"];
  const fine =
    typeof record?.folder === "string" &&
    arrays.every((key) => Array.isArray(record[key])) &&
    numbers.every((key) => Number.isInteger(record[key]));
  const loaded = new Set(fine ? record.libraries.map(([path]) => path) : []);
  if (!fine || !record.opened.every(([, path]) => loaded.has(path))) {
    throw new Error("the snapshot's record of its packages is damaged; the server makes it again");
  }
  return record;
}

/**
 * Emscripten's records of the libraries a snapshot's interpreter had opened with `dlopen`: their
 * handles (C structures in the heap), by path. Each handle also keeps a copy of its library's
 * file, which only another thread would load from: it is freed here (the snapshot is smaller by
 * the files' size), and the handle says it has none.
 */
export function openedLibraries(pyodide) {
  const module = pyodide._module;
  const opened = [];
  for (const [handle, dso] of Object.entries(module.LDSO.loadedLibsByHandle)) {
    if (Number(handle) === 0) continue; // the interpreter itself
    opened.push([Number(handle), dso.name, Boolean(dso.global)]);
    const data = (Number(handle) + 28) >>> 2; // struct dso: file_data, file_data_size
    if (module.HEAPU32[data]) module._free(module.HEAPU32[data]);
    module.HEAPU32[data] = 0;
    module.HEAPU32[data + 1] = 0;
  }
  return opened;
}

/**
 * After a restore whose boot loaded the libraries early (and found them where `record` says, in
 * `loadLibrariesEarly`): make Emscripten's records of the libraries the snapshot's interpreter
 * had opened with `dlopen`, under the handles its C side still holds.
 */
export function reopenLibraries(pyodide, record) {
  const module = pyodide._module;
  for (const [handle, path, global] of record.opened) {
    module.loadDynamicLibrary(path, { global, nodelete: true }, global ? undefined : {}, handle);
  }
}
