// Boot Pyodide and run cells in it: `bootCellRunner` returns a `CellRunner`.
//
// This is the one bootstrap module of promptdojo: the browser's kernel worker imports it, and so
// does the Pyodide-in-Node cell check. Keep it free of DOM and of Node APIs: whatever differs
// between the two (how `loadPyodide` is found, where the bundle bytes come from) is passed in.
import { bootMark } from "../shared/protocol.js";
import { importAll, withImports } from "./imports.js";
import { LIBRARY_PACKAGE } from "./library.js";
import { packagedSnapshot, startPython } from "./interpreter.js";
import { installWheels, prepareWheels, unzipArchive, wheelsCover } from "./wheels.js";

export { LIBRARY_DIR } from "./library.js";
// The snapshot's maker, for the Node script that makes it (promptdojo/pyodide/node/snapshot.mjs).
export { makeSnapshot, zeroFreeHeap } from "./snapshot-make.js";
// The snapshot's maker prepares the wheels of the packages it holds as pages do.
export { prepareWheels } from "./wheels.js";

/**
 * A UTF-8 stream writer for Pyodide's `setStdout`/`setStderr` `write` option: it passes on text as
 * it arrives (not only at line ends), so a long-running cell's output streams.
 */
function streamWriter(emit) {
  const decoder = new TextDecoder();
  return {
    isatty: false,
    write(bytes) {
      const text = decoder.decode(bytes, { stream: true });
      if (text) emit(text);
      return bytes.length;
    },
  };
}

export { checkedSnapshot, packSnapshot } from "./snapshot-file.js";
// The stop rule, for the Node check (check.mjs), which gets the worker's code through this module.
export { escalateStop, GAVE_UP } from "../shared/stopper.js";

/**
 * Install the prepared wheels; returns null, or why they could not be used (the packages are then
 * left to `loadPackage`, which overwrites whatever was written).
 */
async function installPrepared(pyodide, prepared) {
  try {
    await installWheels(pyodide, await prepared);
    return null;
  } catch (error) {
    const why = String(error?.message ?? error).trim().split("\n").at(-1);
    console.warn(`promptdojo: installing the lesson's packages through Pyodide instead: ${why}`);
    return why;
  }
}

/**
 * Why a package did not load, from what Pyodide reported: its own lines ("Loading numpy",
 * "Failed to load numpy", "The following error occurred while loading numpy:") say nothing
 * of the cause, which is on the lines after them.
 */
export function loadFailureCause(detail, name) {
  const said = /^(Loading |Loaded |Failed to load |The following error occurred while loading )/;
  const lines = String(detail)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !said.test(line));
  return [...new Set(lines)].join("; ") || `${name} could not be loaded, and Pyodide said no more`;
}

/**
 * Load the packages not loaded yet through Pyodide's `loadPackage`: those no wheel was prepared
 * for, and any that failed at boot, tried once more to learn why (the server answers a missing
 * package at once, with the reason). Returns the reason for each one still missing, by name.
 */
async function loadMissing(pyodide, packages, bootErrors) {
  const missing = {};
  for (const name of packages.filter((n) => !pyodide.loadedPackages[n])) {
    const errors = [];
    try {
      await pyodide.loadPackage(name, {
        messageCallback: () => {},
        errorCallback: (message) => errors.push(message),
      });
    } catch (error) {
      errors.push(String(error?.message ?? error));
    }
    if (!pyodide.loadedPackages[name]) {
      missing[name] = errors.join("\n") || bootErrors.join("\n") || `${name} could not be loaded`;
    }
  }
  return missing;
}

/**
 * Boot Pyodide, install the learner bundle and import the cell kernel (`promptdojo.kernel`):
 * from a memory snapshot when one is given, else (or when anything about it fails: fetching,
 * its hash, the restore, the first statement after it) from scratch, with `snapshotFailed` in
 * the ready phase's detail.
 *
 * @param {object} options
 * @param {Function} options.loadPyodide  `loadPyodide` from the pinned `pyodide` package.
 * @param {string} options.indexURL  Folder (URL or path) of the Pyodide core.
 * @param {string} [options.packageBaseUrl]  Where package wheels named in the lock file live.
 * @param {string[]} [options.packages]  Pyodide packages the lesson needs, e.g. ["numpy"].
 * @param {object[]} [options.wheels]  The wheels of `packages` and their dependencies, in install
 *   order, as `{name, file_name, sha256, install_dir, bytes}` (`bytes`: a promise of the file).
 *   When they cover every package, they are unpacked and compiled while the interpreter starts
 *   (wheels.js); else, or if that fails, Pyodide's `loadPackage` installs the packages.
 * @param {Promise<object[]>} [options.prepared]  `wheels` already prepared elsewhere (the
 *   browser's download worker): `prepareWheels`' result. Then `wheels` need no `bytes`.
 * @param {ArrayBuffer|Uint8Array|Promise<ArrayBuffer>|Promise<object>} options.bundle  The zipped
 *   learner library (a promise: the interpreter starts while it downloads), or a promise of it
 *   unzipped (`unzipArchive`'s `{names, files}`: the browser's download worker unzips it).
 * @param {Promise<Uint8Array>|Uint8Array} [options.snapshot]  A snapshot (`makeSnapshot`'s bytes).
 * @param {object} [options.snapshotPackages]  The record of the packages the snapshot holds
 *   (`makeSnapshot`'s `packages`), whose prepared wheels' libraries are then loaded before it.
 * @param {(name: "stdout"|"stderr", text: string) => void} options.onStream  Output sink.
 * @param {(phase: string, detail?: object) => void} [options.onPhase]  Boot progress.
 * @param {object} [options.pyodideOptions]  More `loadPyodide` options (Node: `packageCacheDir`).
 * @param {string[]} [options.imports]  Modules the page's cells import (promptdojo.course.imports),
 *   imported before "ready" so that no learner's first Run pays for compiling them.
 * @returns {Promise<CellRunner>}
 */
export async function bootCellRunner({
  loadPyodide,
  indexURL,
  packageBaseUrl,
  packages = [],
  wheels = [],
  prepared: preparedWheels,
  bundle,
  snapshot,
  snapshotPackages = null,
  onStream,
  onPhase = () => {},
  pyodideOptions = {},
  imports = [],
}) {
  // Prepared wheels make the packages ready in parallel with the interpreter's start. Without
  // them, packages are requested through loadPyodide's own `packages` option, so at least their
  // download runs in parallel.
  const covered = wheelsCover(wheels, packages);
  const prepared = covered ? (preparedWheels ?? prepareWheels(wheels)) : null;
  prepared?.catch(() => {}); // reported below, where loadPackage takes over
  // Unzipped once, as it comes; written after the cold boot, or after a restore once the
  // packages are in (writeLibrary).
  const library = Promise.resolve(bundle).then((data) =>
    data?.names ? data : unzipArchive(new Uint8Array(data), "the learner bundle"),
  );
  library.catch(() => {}); // the boot that awaits it fails with the reason
  library.then(() => bootMark("library-unzipped"), () => {});
  onPhase("starting", { packages, snapshot: Boolean(snapshot) });
  const bootErrors = [];
  const config = {
    indexURL,
    packages: covered ? [] : packages,
    ...pyodideOptions,
    // Pyodide reports a package it could not load on stderr during boot; keep those lines.
    stderr: (line) => bootErrors.push(line),
  };
  if (packageBaseUrl) config.packageBaseUrl = packageBaseUrl;
  const { pyodide, restored, snapshotFailed, inSnapshot, heldImports } = await startPython({
    loadPyodide,
    config,
    snapshot,
    packaged: packagedSnapshot(snapshotPackages, prepared),
    library,
    onFailed: (why) => onPhase("starting", { packages, snapshot: false, snapshotFailed: why }),
  });
  pyodide.setStdout(streamWriter((text) => onStream("stdout", text)));
  pyodide.setStderr(streamWriter((text) => onStream("stderr", text)));
  const kernelModule = pyodide.pyimport("promptdojo.kernel");
  // Packages already loaded here came in with the interpreter's start, not after it.
  onPhase("python-ready", { preloaded: packages.filter((n) => pyodide.loadedPackages[n]) });
  const install = prepared && !inSnapshot.length; // the snapshot's packages are installed
  const wheelsFailed = install ? await installPrepared(pyodide, prepared) : null;
  bootMark("installed");
  const missing = await loadMissing(pyodide, packages, bootErrors);
  const newRunner = () => new CellRunner(pyodide, newKernel(kernelModule, missing), missing);
  // After a restore the bundle is written once numpy is in; a cold boot installed it already.
  const written = restored ? library : null;
  const { runner, importedAfterRestore } = await withImports(pyodide, written, imports, newRunner);
  bootMark("imported");
  const warmUp = runner.warmUp(Boolean(pyodide.loadedPackages.numpy) && !("numpy" in missing));
  bootMark("warmed-up");
  onPhase("ready", {
    missing: Object.keys(missing),
    loaded: packages.filter((name) => !(name in missing)),
    restored: Boolean(snapshot) && !snapshotFailed,
    snapshotFailed,
    fromWheels: Boolean(prepared) && !wheelsFailed,
    wheelsFailed,
    // What came with its modules' bytecode, so that importing it compiled nothing.
    bytecode: await withBytecode(library, prepared, wheelsFailed),
    // The packages restored with the snapshot, their libraries loaded before it; and the modules
    // imported after the restore (those it held are imported already).
    inSnapshot,
    importedAfterRestore: importedAfterRestore.filter((name) => !heldImports.includes(name)),
    // A typical cell, run once unseen: the first Run pays no first-call compiling.
    warmUp,
  });
  return runner;
}

/**
 * What came with its modules' bytecode: the learner library (`"promptdojo"`) when its bundle holds
 * pycs (the server's compiled bundle, promptdojo.pyodide.bytecode), and the packages whose compiled
 * archive was installed (downloads.js).
 */
async function withBytecode(library, prepared, wheelsFailed) {
  const compiledLibrary = (await library).names.some((name) => name.endsWith(".pyc"));
  const names = compiledLibrary ? [LIBRARY_PACKAGE] : [];
  if (wheelsFailed || !prepared) return names;
  const compiled = (await prepared).filter((wheel) => wheel.bytecode);
  return [...names, ...compiled.map((wheel) => wheel.name)];
}

/** A kernel CellResult as a plain object (`to_dict`, converted to JS). */
function plainResult(result) {
  const dict = result.to_dict();
  try {
    return dict.toJs({ dict_converter: Object.fromEntries });
  } finally {
    dict.destroy();
  }
}

/** The Python kernel, with an import of each package in `missing` failing with its reason. */
function newKernel(kernelModule, missing) {
  const pyKernel = kernelModule.Kernel();
  for (const [name, detail] of Object.entries(missing)) {
    pyKernel.mark_unavailable(
      name,
      `${name} is not available: the server could not provide its Pyodide package ` +
        `(${loadFailureCause(detail, name)}). Whoever runs the server can pre-fetch it with ` +
        `\`promptdojo pyodide fetch ${name}\`; then reload this page.`,
    );
  }
  return pyKernel;
}

/**
 * The interrupt buffer to give Pyodide for the shared `Int32Array` `shared`: its index 0, read
 * and cleared so that no signal is lost. CPython's check (`_Py_CheckEmscriptenSignals_Helper`,
 * python/cpython#157548) reads the buffer and then stores 0 in a second step; a signal written by
 * the page between the two was overwritten and never raised (3 Stops in 100, in a tight loop under
 * Node). Here that store clears only the value just read (a compare-and-exchange), so a signal
 * written meanwhile stays in the buffer, and the next check takes it.
 */
export function interruptSlot(shared) {
  let seen = 0;
  return {
    length: 1,
    get 0() {
      seen = Atomics.load(shared, 0);
      return seen;
    },
    set 0(value) {
      Atomics.compareExchange(shared, 0, seen, value);
    },
  };
}

/** A booted Pyodide plus the Python `promptdojo.kernel.Kernel` that runs cells. */
export class CellRunner {
  constructor(pyodide, pyKernel, missingPackages) {
    this.pyodide = pyodide;
    this.pyKernel = pyKernel;
    /** Packages the lesson asked for that could not be loaded, with the reason. */
    this.missingPackages = missingPackages;
  }

  /** Wire a SharedArrayBuffer-backed Int32Array so that writing 2 raises KeyboardInterrupt. */
  setInterruptBuffer(buffer) {
    this.pyodide.setInterruptBuffer(interruptSlot(buffer));
  }

  /**
   * Run `code` in the namespace `key` (one per step). Returns a plain object:
   * `{ ok, value, error_type, error_message, traceback, error_line, controls }`; `controls`
   * holds the values the page chose for the cell's controls (`promptdojo.ui`), by name.
   */
  run(code, { key, cellId, controls }) {
    // Control values cross as JSON text: Python parses and checks them (promptdojo.kernel).
    const values = controls == null ? undefined : JSON.stringify(controls); // undefined is None
    const result = this.pyKernel.run.callKwargs(code, key, cellId, { controls: values });
    try {
      return plainResult(result);
    } catch (error) {
      // A Stop that lands while the finished cell's result is converted (Python checks for
      // signals there too) fails the conversion, not the cell: the signal is spent, so the
      // second conversion goes through and the learner keeps the result.
      if (error?.type !== "ConversionError" && error?.type !== "KeyboardInterrupt") throw error;
      return plainResult(result);
    } finally {
      result.destroy();
    }
  }

  /**
   * Run a typical cell once, unseen (promptdojo.kernel's `warm_up`): WebAssembly compiles each
   * function on its first call, and this moves that cost off the learner's first Run. Returns
   * `{ms, numpy}`, or `{failed}` (the learner's cells then show whatever it was).
   */
  warmUp(numpy) {
    const started = performance.now();
    try {
      const result = this.pyKernel.warm_up.callKwargs({ numpy });
      const ok = result.ok;
      result.destroy();
      if (!ok) return { failed: true, numpy };
    } catch (error) {
      return { failed: String(error?.message ?? error).split("\n").at(-1), numpy };
    }
    return { ms: Math.round(performance.now() - started), numpy };
  }

  /**
   * The warm-ups of the modules `names` (and their packages) that have one and have not run
   * (promptdojo.kernel's `warm_up_modules`: the tiny model's first forward pass, say). Returns
   * the modules warmed now; none if it failed.
   */
  warmUpModules(names) {
    try {
      const list = this.pyKernel.warm_up_modules(names);
      try {
        return list.toJs();
      } finally {
        list.destroy();
      }
    } catch {
      return []; // a Stop that landed meanwhile, or a broken interpreter: the next Run shows it
    }
  }

  /** Forget the namespace `key`. */
  reset(key) {
    this.pyKernel.reset(key);
  }

  /**
   * Import `names` (modules the lesson's cells import) into the interpreter, not into any cell's
   * namespace; returns those that imported. One that fails is left for its cell to report.
   */
  importModules(names) {
    return importAll(this.pyodide, names);
  }
}
