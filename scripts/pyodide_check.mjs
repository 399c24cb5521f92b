// Run one lesson step's cells in real Pyodide under Node: `node scripts/pyodide_check.mjs JOB OUT`.
//
// Pyodide runs in a worker thread, booted by static/js/boot.js (the browser worker's own
// bootstrap). The main thread enforces each cell's time limit the way the browser does: it writes
// SIGINT into the interrupt buffer, and if the cell is still running after a grace period it
// terminates the worker. The judging rules are Python's (promptdojo.checking.steprun), so a cell
// passes or fails here exactly as in the CPython check.
//
// JOB: {pyodide, packageDir, packages, bundle, source, step, timeLimit, graceMs}
// OUT: JSON {outcomes: [...], missing: {name: reason}, crashed: "why" | null}
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

const RUN_STEP = `
import contextlib, json, sys
import js
from promptdojo.checking.serialize import step_from_dict
from promptdojo.checking.steprun import StepRunner

class InterruptLimiter:
    """Time limits by the main thread's interrupt, as in the browser."""

    def __call__(self, seconds):
        return self._limit(seconds)

    @contextlib.contextmanager
    def _limit(self, seconds):
        js.pdStart(seconds)
        try:
            yield
        finally:
            js.pdStop()

    def expired(self):
        return bool(js.pdExpired())

job = json.loads(js.pdJob)
runner = StepRunner(step_from_dict(job["step"]), job["timeLimit"], limiter=InterruptLimiter())
runner.run(on_outcome=lambda o: js.pdOutcome(json.dumps(o.to_dict())))
`;

async function workerMain() {
  const { job, shared } = workerData;
  const flags = new Int32Array(shared);
  const core = path.resolve(job.pyodide) + path.sep;
  const cache = path.resolve(job.packageDir) + path.sep;
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  const { bootKernel } = await import("../static/js/boot.js");
  const kernel = await bootKernel({
    loadPyodide,
    indexURL: core,
    packageBaseUrl: cache,
    packages: job.packages,
    bundle: new Uint8Array(await readFile(job.bundle)),
    onStream: () => {},
    pyodideOptions: { packageCacheDir: cache },
  });
  if (Object.keys(kernel.missingPackages).length) {
    parentPort.postMessage({ type: "missing", missing: kernel.missingPackages });
    return;
  }
  const { pyodide } = kernel;
  kernel.setInterruptBuffer(flags.subarray(0, 1));
  // The full promptdojo package (judging rules included) goes before the learner bundle.
  const source = "/promptdojo-src";
  pyodide.FS.mkdirTree(`${source}/promptdojo`);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: job.source }, `${source}/promptdojo`);
  // promptdojo is already imported (from the bundle): let its package path see the full source.
  pyodide.runPython(`import promptdojo; promptdojo.__path__.insert(0, "${source}/promptdojo")`);
  globalThis.pdJob = JSON.stringify(job);
  globalThis.pdStart = (seconds) => {
    Atomics.store(flags, 1, 0);
    parentPort.postMessage({ type: "start", seconds });
  };
  globalThis.pdStop = () => parentPort.postMessage({ type: "stop" });
  globalThis.pdExpired = () => Atomics.load(flags, 1);
  globalThis.pdOutcome = (text) => parentPort.postMessage({ type: "outcome", outcome: JSON.parse(text) });
  await pyodide.runPythonAsync(RUN_STEP);
  parentPort.postMessage({ type: "done" });
}

async function main() {
  const [jobPath, outPath] = process.argv.slice(2);
  const job = JSON.parse(await readFile(jobPath, "utf8"));
  const shared = new SharedArrayBuffer(8);
  const flags = new Int32Array(shared);
  const result = { outcomes: [], missing: {}, crashed: null };
  let timer = null;
  let killer = null;
  const clear = () => {
    clearTimeout(timer);
    clearTimeout(killer);
  };
  const finish = async () => {
    clear();
    await writeFile(outPath, JSON.stringify(result));
    process.exit(0);
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: { job, shared } });
  worker.on("message", async (message) => {
    if (message.type === "start") {
      clear();
      timer = setTimeout(() => {
        Atomics.store(flags, 1, 1);
        Atomics.store(flags, 0, 2); // SIGINT: Python raises KeyboardInterrupt in the cell
        killer = setTimeout(async () => {
          result.crashed = `a cell ran past its ${message.seconds} s time limit and did not stop`;
          await worker.terminate();
          await finish();
        }, job.graceMs ?? 1500);
      }, message.seconds * 1000);
    } else if (message.type === "stop") {
      clear();
    } else if (message.type === "outcome") {
      result.outcomes.push(message.outcome);
    } else if (message.type === "missing") {
      result.missing = message.missing;
      await finish();
    } else if (message.type === "done") {
      await finish();
    }
  });
  worker.on("error", async (error) => {
    result.crashed = `the Pyodide worker crashed: ${String(error?.message ?? error).trim().split("\n").slice(-1)[0]}`;
    await finish();
  });
  worker.on("exit", async () => {
    result.crashed ??= "the Pyodide worker exited early";
    await finish();
  });
}

if (isMainThread) {
  main().catch((error) => {
    console.error(`pyodide_check: ${String(error?.message ?? error).split("\n")[0]}`);
    process.exit(2);
  });
} else {
  workerMain().catch((error) => {
    parentPort.postMessage({ type: "outcome-error", message: String(error) });
    throw error;
  });
}
