// Run a Python script that reports cell outcomes in real Pyodide under Node: `node check.mjs JOB OUT`.
//
// Pyodide runs in a worker thread, booted by boot.js (the browser worker's own bootstrap). The
// main thread enforces each cell's time limit by the page's own stop rule (static/js/shared/
// stopper.js, which boot.js re-exports): SIGINT into the interrupt buffer; if Python has not taken
// it a grace period later, or took it but the cell is still running a wind-down period after
// that, it terminates the worker. The script is Python (promptdojo.checking.backends.pyodide_step):
// it judges with the same rules as the CPython check, and talks to this file through the pd*
// globals below.
//
// JOB and OUT are typed in static/js/shared/contract.js (CheckJob, CheckOutput; their Python side
// is promptdojo.checking.backends.pyodide), and the pd* globals the judge calls (CheckGlobals).
// JOB: {boot, pyodide, packageDir, packages, bundle, source, script, graceMs, windDownMs, ...}
// (promptdojo.pyodide.limits.STOP_GRACE_SECONDS and STOP_WIND_DOWN_SECONDS, in milliseconds)
// OUT: JSON {outcomes: [...], missing: {name: reason}, crashed: "why" | null,
//            boot: the ready phase's detail ({restored, snapshotFailed, ...})}
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { bootInNode } from "./boot_node.mjs";

/** What the Pyodide thread tells the main thread, by `type`. */
const FROM_THREAD = Object.freeze({
  BOOT: "boot", // {detail}: the boot's ready phase
  MISSING: "missing", // {missing}: packages the cache lacks; nothing runs
  START: "start", // {seconds}: a cell starts, with its time limit
  STOP: "stop", // the cell ended in time
  OUTCOME: "outcome", // {outcome}: a cell's verdict (promptdojo.checking.outcome)
  DONE: "done", // the step's script ended
});

async function workerMain() {
  const { job, shared } = workerData;
  const flags = new Int32Array(shared);
  const runner = await bootInNode(job, undefined, (phase, detail) => {
    if (phase === "ready") parentPort.postMessage({ type: FROM_THREAD.BOOT, detail });
  });
  if (Object.keys(runner.missingPackages).length) {
    parentPort.postMessage({ type: FROM_THREAD.MISSING, missing: runner.missingPackages });
    return;
  }
  const { pyodide } = runner;
  runner.setInterruptBuffer(flags.subarray(0, 1));
  // The full promptdojo package (the judge included) goes before the learner bundle.
  const source = "/promptdojo-src";
  pyodide.FS.mkdirTree(`${source}/promptdojo`);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: job.source }, `${source}/promptdojo`);
  // promptdojo is already imported (from the bundle): let its package path see the full source.
  pyodide.runPython(`import promptdojo; promptdojo.__path__.insert(0, "${source}/promptdojo")`);
  globalThis.pdJob = JSON.stringify(job);
  globalThis.pdStart = (seconds) => {
    Atomics.store(flags, 1, 0);
    parentPort.postMessage({ type: FROM_THREAD.START, seconds });
  };
  globalThis.pdStop = () => parentPort.postMessage({ type: FROM_THREAD.STOP });
  globalThis.pdExpired = () => Atomics.load(flags, 1);
  globalThis.pdOutcome = (text) => parentPort.postMessage({ type: FROM_THREAD.OUTCOME, outcome: JSON.parse(text) });
  await pyodide.runPythonAsync(job.script);
  parentPort.postMessage({ type: FROM_THREAD.DONE });
}

/** What the check says of a cell the stop rule gave up on (`GAVE_UP`, stopper.js). */
function gaveUpWhy(why, job, GAVE_UP) {
  if (why === GAVE_UP.NOT_TAKEN) return `did not take the interrupt within ${job.graceMs / 1000} s`;
  return `took the interrupt but did not stop within ${job.windDownMs / 1000} s more`;
}

async function main() {
  const [jobPath, outPath] = process.argv.slice(2);
  const job = JSON.parse(await readFile(jobPath, "utf8"));
  const { escalateStop, GAVE_UP } = await import(pathToFileURL(path.resolve(job.boot)).href);
  const shared = new SharedArrayBuffer(8);
  const flags = new Int32Array(shared);
  const result = { outcomes: [], missing: {}, crashed: null, boot: null };
  let timer = null;
  let stopping = null;
  const clear = () => {
    clearTimeout(timer);
    stopping?.();
  };
  // Once only: "done" is followed by the worker's "exit", and a second write would truncate the
  // file the first one is finishing just as the process exits (an empty OUT).
  let finished = null;
  const finish = () => {
    finished ??= (async () => {
      clear();
      await writeFile(outPath, JSON.stringify(result));
      process.exit(0);
    })();
    return finished;
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: { job, shared } });
  worker.on("message", async (message) => {
    if (message.type === FROM_THREAD.START) {
      clear();
      timer = setTimeout(() => {
        Atomics.store(flags, 1, 1); // expired: the judge reads it (pdExpired)
        stopping = escalateStop({
          buffer: flags.subarray(0, 1),
          graceMs: job.graceMs,
          windDownMs: job.windDownMs,
          giveUp: async (why) => {
            result.crashed = `a cell ran past its ${message.seconds} s time limit and ${gaveUpWhy(why, job, GAVE_UP)}`;
            await worker.terminate();
            await finish();
          },
        });
      }, message.seconds * 1000);
    } else if (message.type === FROM_THREAD.BOOT) {
      result.boot = message.detail;
    } else if (message.type === FROM_THREAD.STOP) {
      clear();
    } else if (message.type === FROM_THREAD.OUTCOME) {
      result.outcomes.push(message.outcome);
    } else if (message.type === FROM_THREAD.MISSING) {
      result.missing = message.missing;
      await finish();
    } else if (message.type === FROM_THREAD.DONE) {
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
    console.error(`check.mjs: ${String(error?.message ?? error).split("\n")[0]}`);
    process.exit(2);
  });
} else {
  // A failure here is an unhandled rejection, which ends the thread with an "error" event: the
  // main thread reports it as the worker's crash.
  workerMain();
}
