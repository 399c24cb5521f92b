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
// `FS.createPreloadedFile`, whose wasm plugin instantiates an already compiled library. Whatever
// fails here leaves the package to `loadPackage` (boot.js).
import { unzipSync } from "fflate";
import { checkedBytes } from "./digest.js";

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
 * The files of the zip archive `data` (`label` names it in errors): `{names, files}`, where
 * `files[name]` holds the bytes of each member `name` (folders left out). Rejects a member that
 * would be written outside the folder the archive is unpacked into.
 */
export function unzipArchive(data, label) {
  const files = unzipSync(data);
  const names = Object.keys(files).filter((name) => !name.endsWith("/"));
  for (const name of names) {
    const why = unsafeMember(name);
    if (why) throw new Error(`${label}: ${name} is ${why}`);
  }
  return { names, files };
}

/** Write the unzipped archive `{names, files}` under `folder` of Pyodide's file system. */
export function writeArchive(FS, folder, { names, files }) {
  for (const name of names) {
    const path = `${folder}/${name}`;
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, files[name], { canOwn: true });
  }
}

/**
 * Download, check, unpack and compile one wheel: `{name, file_name, sha256, install_dir, bytes}`
 * where `bytes` is a promise of the wheel's contents. Rejects with the reason.
 */
export async function prepareWheel({ bytes, ...wheel }) {
  const data = await checkedBytes(await bytes, wheel.sha256, wheel.file_name);
  const { names, files } = unzipArchive(data, wheel.file_name);
  const distInfo = names.map((name) => name.split("/")[0]).find((top) => top.endsWith(".dist-info"));
  if (!distInfo) throw new Error(`${wheel.file_name} has no .dist-info folder`);
  const libraries = names.filter((name) => SHARED_LIBRARY.test(name));
  // Compiled off the worker's thread, while the interpreter starts.
  const modules = await Promise.all(libraries.map((name) => WebAssembly.compile(files[name])));
  return { ...wheel, files, names, distInfo, libraries: libraries.map((n, i) => [n, modules[i]]) };
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

/** Install prepared wheels into `pyodide`, dependencies first, as `loadPackage` would. */
export async function installWheels(pyodide, prepared) {
  const { FS, _api: api } = pyodide;
  for (const wheel of prepared) {
    const folder = api.package_loader.get_install_dir(wheel.install_dir ?? "site");
    writeArchive(FS, folder, wheel);
    for (const [record, text] of Object.entries(RECORDS)) {
      FS.writeFile(`${folder}/${wheel.distInfo}/${record}`, text);
    }
    for (const [name, module] of wheel.libraries) {
      await preloadLibrary(FS, `${folder}/${name}`, module);
    }
    for (const [name] of wheel.libraries) await api.loadDynlib(`${folder}/${name}`);
    pyodide.loadedPackages[wheel.name] = CHANNEL;
  }
  pyodide.runPython("import importlib\nimportlib.invalidate_caches()");
}
