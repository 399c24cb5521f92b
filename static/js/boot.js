// Boot Pyodide and run cells in it: `bootCellRunner` returns a `CellRunner`.
//
// This is the one bootstrap module of promptdojo: the browser's kernel worker imports it, and so
// does the Pyodide-in-Node cell check. Keep it free of DOM and of Node APIs: whatever differs
// between the two (how `loadPyodide` is found, where the bundle bytes come from) is passed in.

/** Where the learner bundle is unpacked inside Pyodide's file system. */
export const LIBRARY_DIR = "/home/pyodide/promptdojo-lib";

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

/**
 * Boot Pyodide, install the learner bundle and import the cell kernel (`promptdojo.kernel`).
 *
 * @param {object} options
 * @param {Function} options.loadPyodide  `loadPyodide` from the pinned `pyodide` package.
 * @param {string} options.indexURL  Folder (URL or path) of the Pyodide core.
 * @param {string} [options.packageBaseUrl]  Where package wheels named in the lock file live.
 * @param {string[]} [options.packages]  Pyodide packages the lesson needs, e.g. ["numpy"].
 * @param {ArrayBuffer|Uint8Array} options.bundle  The zipped learner library.
 * @param {(name: "stdout"|"stderr", text: string) => void} options.onStream  Output sink.
 * @param {(phase: string, detail?: object) => void} [options.onPhase]  Boot progress.
 * @param {object} [options.pyodideOptions]  More `loadPyodide` options (Node: `packageCacheDir`).
 * @returns {Promise<CellRunner>}
 */
export async function bootCellRunner({
  loadPyodide,
  indexURL,
  packageBaseUrl,
  packages = [],
  bundle,
  onStream,
  onPhase = () => {},
  pyodideOptions = {},
}) {
  // Packages are requested through loadPyodide's own `packages` option, so their download runs
  // in parallel with the interpreter's start instead of after it.
  onPhase("starting", { packages });
  const config = { indexURL, packages, ...pyodideOptions };
  if (packageBaseUrl) config.packageBaseUrl = packageBaseUrl;
  const bootErrors = [];
  const pyodide = await loadPyodide({
    ...config,
    // Pyodide reports a package it could not load on stderr during boot; keep those lines.
    stderr: (line) => bootErrors.push(line),
  });
  pyodide.setStdout(streamWriter((text) => onStream("stdout", text)));
  pyodide.setStderr(streamWriter((text) => onStream("stderr", text)));

  pyodide.unpackArchive(bundle, "zip", { extractDir: LIBRARY_DIR });
  const sys = pyodide.pyimport("sys");
  sys.path.insert(0, LIBRARY_DIR);
  sys.destroy?.();
  const kernelModule = pyodide.pyimport("promptdojo.kernel");
  // Packages already loaded here came in with the interpreter's start, not after it.
  onPhase("python-ready", { preloaded: packages.filter((n) => pyodide.loadedPackages[n]) });

  // A package that failed at boot is tried once more, to learn why (the server answers a
  // missing package at once, with the reason).
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
  const pyKernel = kernelModule.Kernel();
  for (const [name, detail] of Object.entries(missing)) {
    pyKernel.mark_unavailable(
      name,
      `${name} is not available: the server could not provide its Pyodide package ` +
        `(${detail.split("\n")[0]}). Whoever runs the server can pre-fetch it with ` +
        `\`promptdojo pyodide fetch ${name}\`; then reload this page.`,
    );
  }
  const runner = new CellRunner(pyodide, pyKernel, missing);
  const loaded = packages.filter((name) => !(name in missing));
  onPhase("ready", { missing: Object.keys(missing), loaded });
  return runner;
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
    this.pyodide.setInterruptBuffer(buffer);
  }

  /**
   * Run `code` in the namespace `key` (one per step). Returns a plain object:
   * `{ ok, value, error_type, error_message, traceback, error_line }`.
   */
  run(code, { key, cellId }) {
    const result = this.pyKernel.run(code, key, cellId);
    const dict = result.to_dict();
    try {
      return dict.toJs({ dict_converter: Object.fromEntries });
    } finally {
      dict.destroy();
      result.destroy();
    }
  }

  /** Forget the namespace `key`. */
  reset(key) {
    this.pyKernel.reset(key);
  }
}
