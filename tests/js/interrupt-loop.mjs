// The worker thread of interrupt.test.mjs: Pyodide, given its interrupt buffer by CellRunner as a
// page's worker is, loops in Python and reports every KeyboardInterrupt it takes (and counts it
// in the shared array's second slot).
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parentPort, workerData } from "node:worker_threads";
import { CellRunner } from "../../static/js/kernel/boot.js";

const LOOP = `
import js
while True:
    try:
        js.pdPost("looping")
        while True:
            pass
    except KeyboardInterrupt:
        js.pdPost("interrupted")
`;

const require = createRequire(import.meta.url);
const core = path.dirname(require.resolve("pyodide/package.json")) + path.sep;
const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: core });
const flags = new Int32Array(workerData.shared);
new CellRunner(pyodide, null, {}).setInterruptBuffer(flags.subarray(0, 1));
globalThis.pdPost = (message) => {
  if (message === "interrupted") Atomics.add(flags, 1, 1); // counted before the message leaves
  parentPort.postMessage(message);
};
pyodide.runPython(LOOP);
