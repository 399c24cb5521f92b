// A lesson's packages, made ready while the interpreter starts.
//
// Pyodide's `loadPackage` can only begin once the interpreter is up: it then unpacks the wheel in
// Python and compiles its shared libraries one at a time, which for numpy is most of a second.
// Here each wheel is downloaded, checked against its lock SHA-256, unpacked and its libraries
// compiled in parallel with the interpreter's start (the snapshot's download and restore), so
// that installing it afterwards is file writes and instantiation only.
//
// The result is the install `loadPackage` makes: the same files in the same folder, the same
// INSTALLER and PYODIDE_SOURCE records, every shared library loaded with `dlopen`, and the package
// listed in `pyodide.loadedPackages`. It relies on internals of the pinned Pyodide releases:
// `_api.package_loader.get_install_dir`, `_api.loadDynlib`, and Emscripten's
// `FS.createPreloadedFile`, whose wasm plugin instantiates an already compiled library, and its
// global offset table (`_module.GOT`, when there is one). Whatever fails here leaves the package
// to `loadPackage` (boot.js).
import { inflateSync, Unzip, unzipSync } from "fflate";
import { checkedBytes } from "../shared/digest.js";
import { bootMark } from "../shared/protocol.js";

/** The records Pyodide's loader writes into a package's .dist-info folder. */
const RECORDS = { INSTALLER: "pyodide.loadPackage", PYODIDE_SOURCE: "pyodide" };
/** How `pyodide.loadedPackages` names the source of a package from the release's own lock. */
const CHANNEL = "default channel";
const SHARED_LIBRARY = /\.so$/;

/** Why the archive member `name` may not be written under an install folder, or null. */
function unsafeMember(name) {
  if (name.startsWith("/") || name.includes("\\")) return "an absolute path";
  if (name.split("/").includes("..")) return "a path that climbs out of its folder";
  if (/^[^/]+\.data\//.test(name)) return "in a .data folder, which only loadPackage installs";
  return null;
}

/**
 * Whether `DecompressionStream` inflates: the browser's zlib is faster than fflate's JavaScript on
 * a cold worker, for a wheel's hundreds of small members as well as its large libraries, and the
 * download worker shares the machine with the interpreter's start. Node's is slower than fflate,
 * so Node (the snapshot maker, `check --pyodide`) keeps fflate.
 */
const NATIVE = (() => {
  if (typeof DecompressionStream !== "function" || globalThis.process?.versions?.node) return false;
  try {
    new DecompressionStream("deflate-raw"); // a browser too old for it inflates in JavaScript
    return true;
  } catch {
    return false;
  }
})();

/** The raw deflate stream `data`, inflated by `DecompressionStream`; rejects if it is damaged. */
async function inflateNative(data) {
  const stream = new DecompressionStream("deflate-raw");
  const writer = stream.writable.getWriter();
  writer.write(data).catch(() => {}); // a failure is the reader's to report
  writer.close().catch(() => {});
  const reader = stream.readable.getReader();
  const chunks = [];
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    chunks.push(read.value);
  }
  return joined(chunks);
}

function joined(chunks) {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** An fflate decoder for deflated members: natively when `native`, else in JavaScript. */
function inflateDecoder(native) {
  return class Inflate {
    static compression = 8;
    constructor() {
      this.chunks = [];
    }
    push(chunk, final) {
      this.chunks.push(chunk);
      if (!final) return;
      const data = joined(this.chunks);
      if (!native) {
        this.ondata(null, inflateSync(data), true);
        return;
      }
      inflateNative(data).then(
        (out) => this.ondata(null, out, true),
        (error) => this.ondata(error, null, true),
      );
    }
  };
}

/** fflate's Unzip recurses once per member within a push: the archive goes in slices. */
const SLICE = 64 * 1024;
/** Stored and deflated: what wheels and our bundle use. */
const METHODS = new Set([0, 8]);

/** How many entries the archive's central directory lists; throws if it is missing or cut. */
function listedEntries(data) {
  let count = 0;
  unzipSync(data, {
    filter: () => {
      count += 1;
      return false; // read the directory only
    },
  });
  return count;
}

/** The bytes of the member `file` that fflate's Unzip announced. */
function memberBytes(file) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    file.ondata = (error, chunk, final) => {
      if (error) return reject(error);
      // A stored member's chunks are views of the archive: copied, so the archive can be freed.
      chunks.push(file.compression === 0 ? chunk.slice() : chunk);
      if (final) resolve(joined(chunks));
    };
    file.start();
  });
}

/**
 * The files of the zip archive `data` (`label` names it in errors): a promise of `{names, files}`,
 * where `files[name]` holds the bytes of each member `name` (folders left out), in archive order.
 * Rejects a member that would be written outside the folder the archive is unpacked into, and a
 * damaged archive (cut short, a member that does not inflate, one its directory does not list).
 */
export function unzipArchive(data, label, native = NATIVE) {
  const damaged = (why) => new Error(`${label} is damaged: ${why?.message ?? why}`);
  const names = [];
  const files = {};
  const members = [];
  let seen = 0;
  const unzip = new Unzip((file) => {
    seen += 1;
    if (file.name.endsWith("/")) return;
    const why = unsafeMember(file.name);
    if (why) throw new Error(`${label}: ${file.name} is ${why}`);
    if (!METHODS.has(file.compression)) {
      throw damaged(`${file.name} uses compression method ${file.compression}`);
    }
    names.push(file.name);
    members.push(memberBytes(file).then((bytes) => (files[file.name] = bytes)));
  });
  unzip.register(inflateDecoder(native));
  try {
    const listed = listedEntries(data);
    for (let at = 0; at < data.length; at += SLICE) {
      unzip.push(data.subarray(at, at + SLICE), at + SLICE >= data.length);
    }
    if (seen !== listed) throw damaged(`its directory lists ${listed} members, it holds ${seen}`);
    if (names.length === 0) throw damaged("it holds no files");
  } catch (error) {
    for (const member of members) member.catch(() => {}); // the archive as a whole is refused
    return Promise.reject(String(error?.message).startsWith(label) ? error : damaged(error));
  }
  return Promise.all(members).then(
    () => ({ names, files }),
    (error) => {
      throw damaged(error);
    },
  );
}

/** Write the unzipped archive `{names, files}` under `folder` of Pyodide's file system. */
export function writeArchive(FS, folder, { names, files }) {
  const made = new Set(); // each folder once: mkdirTree throws and catches for every part there
  for (const name of names) {
    const path = `${folder}/${name}`;
    const parent = path.slice(0, path.lastIndexOf("/"));
    if (!made.has(parent)) {
      FS.mkdirTree(parent);
      made.add(parent);
    }
    FS.writeFile(path, files[name], { canOwn: true });
  }
}

/**
 * Download, check, unpack and compile one wheel: `{name, file_name, sha256, install_dir, bytes}`
 * where `bytes` is a promise of the wheel's contents. Rejects with the reason.
 */
export async function prepareWheel({ bytes, ...wheel }) {
  const data = await checkedBytes(await bytes, wheel.sha256, wheel.file_name);
  const { names, files } = await unzipArchive(data, wheel.file_name);
  const distInfo = names.map((name) => name.split("/")[0]).find((top) => top.endsWith(".dist-info"));
  if (!distInfo) throw new Error(`${wheel.file_name} has no .dist-info folder`);
  const libraries = names.filter((name) => SHARED_LIBRARY.test(name));
  // Compiled off the worker's thread, while the interpreter starts. A download worker's job moves
  // on while one compiles (download-worker.js), however long it takes: each start and end is
  // marked, the end also when the compile fails.
  const compile = (name) => {
    bootMark("library-compiling");
    const done = WebAssembly.compile(files[name]);
    done.finally(() => bootMark("library-compiled")).catch(() => {});
    return done;
  };
  const modules = await Promise.all(libraries.map(compile));
  return { ...wheel, files, names, distInfo, libraries: libraries.map((n, i) => [n, modules[i]]) };
}

/**
 * Whether `wheels` (`{name, ...}` each) hold every one of `packages`: only then are they prepared
 * and installed here; else Pyodide's `loadPackage` installs the packages.
 */
export function wheelsCover(wheels, packages) {
  return wheels.length > 0 && packages.every((name) => wheels.some((w) => w.name === name));
}

/** Prepare `wheels` (in install order); rejects with the first reason one cannot be used. */
export function prepareWheels(wheels) {
  return Promise.all(wheels.map(prepareWheel));
}

/** Instantiate a compiled library into the interpreter, for `dlopen(path)` to find. */
function preloadLibrary(FS, path, module) {
  return new Promise((resolve, reject) => {
    const failed = () => reject(new Error(`${path} could not be instantiated`));
    // dontCreateFile: the file itself is written with the others.
    FS.createPreloadedFile(path, undefined, module, true, false, resolve, failed, true);
  });
}

/** Every name a compiled library imports from Emscripten's global offset table, or exports. */
function tableNames(module) {
  const imported = WebAssembly.Module.imports(module).filter((i) => i.module.startsWith("GOT."));
  return [...imported, ...WebAssembly.Module.exports(module)].map((entry) => entry.name);
}

/**
 * Run `load()` with the resolved entries of Emscripten's global offset table (`GOT`) set aside,
 * but those `libraries` name, and put them back after. After each library it instantiates, the
 * loader passes over every entry (`reportUndefinedSymbols`) to resolve those still unresolved
 * (0 in Pyodide 0.29's Emscripten, -1 in later ones): ten thousand entries of Pyodide's own,
 * thirteen times for numpy, the install's largest cost. A library reaches the table by name only
 * (its imports; its exports, which the loader enters there), so each one meets the same entries
 * it would have met; the passes skip resolved entries, so they do the same work. The linker's
 * own entries (`__heap_base`, which the loader moves past each library's data before the
 * runtime starts, snapshot-packages.js) stay.
 */
export async function withResolvedSetAside(GOT, libraries, load) {
  if (!GOT || libraries.length === 0) return load();
  const named = new Set(libraries.flatMap(([, module]) => tableNames(module)));
  const aside = {};
  for (const [name, entry] of Object.entries(GOT)) {
    if (named.has(name) || name.startsWith("__") || entry.value === 0 || entry.value === -1) {
      continue;
    }
    aside[name] = entry;
    delete GOT[name];
  }
  let result;
  try {
    result = await load();
  } finally {
    // An entry made meanwhile under a name set aside (a library outside this wheel's) is what a
    // library now holds: it stays, and the install is left to loadPackage.
    const remade = Object.keys(aside).filter((name) => name in GOT);
    for (const name of Object.keys(aside)) GOT[name] ??= aside[name];
    if (remade.length) throw new Error(`the offset table's ${remade[0]} was made again`);
  }
  return result;
}

/** Write a prepared wheel's files and Pyodide's records of it; returns the folder it went to. */
function writeWheel(pyodide, wheel) {
  const folder = pyodide._api.package_loader.get_install_dir(wheel.install_dir ?? "site");
  writeArchive(pyodide.FS, folder, wheel);
  for (const [record, text] of Object.entries(RECORDS)) {
    pyodide.FS.writeFile(`${folder}/${wheel.distInfo}/${record}`, text);
  }
  return folder;
}

/** Install prepared wheels into `pyodide`, dependencies first, as `loadPackage` would. */
export async function installWheels(pyodide, prepared) {
  const { FS, _api: api, _module: module } = pyodide;
  for (const wheel of prepared) {
    const folder = writeWheel(pyodide, wheel);
    await withResolvedSetAside(module?.GOT, wheel.libraries, async () => {
      for (const [name, compiled] of wheel.libraries) {
        await preloadLibrary(FS, `${folder}/${name}`, compiled);
      }
    });
    for (const [name] of wheel.libraries) await api.loadDynlib(`${folder}/${name}`);
    pyodide.loadedPackages[wheel.name] = CHANNEL;
  }
  pyodide.runPython("import importlib\nimportlib.invalidate_caches()");
}

/**
 * Write prepared wheels whose libraries are loaded already (snapshot-packages.js: by the boot, for
 * a snapshot that holds the packages): their files, and the packages listed as loaded.
 */
export function writeWheels(pyodide, prepared) {
  for (const wheel of prepared) {
    writeWheel(pyodide, wheel);
    pyodide.loadedPackages[wheel.name] = CHANNEL;
  }
  pyodide.runPython("import importlib\nimportlib.invalidate_caches()");
}
