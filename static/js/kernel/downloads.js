// What the kernel worker needs from the network before Python can use it: the memory snapshot
// (fetched, checked, its zero pages put back), the lesson's wheels (fetched, checked, unpacked,
// their libraries compiled) and the learner bundle (fetched, unpacked), started in turns so that
// on a slow link they end in the order the boot needs them (download-order.js).
//
// The work runs in a download worker of its own (download-worker.js), started by the kernel
// worker. The kernel worker's thread is busy while these bytes arrive (starting Pyodide's loader,
// instantiating its WebAssembly), and a fetch's body is read on the thread that asked for it: on
// a second visit, with every file cached, the snapshot spent most of its time waiting for that
// thread. The download worker's thread is idle, so the bytes arrive as fast as the browser hands
// them over, and are then moved (not copied) to the kernel worker.
//
// Where the download worker cannot start, or fails, the same work runs in the kernel worker, as
// it did before: nothing is lost but time. In both workers, the boot's files are read from the
// course's offline copy first (offline-copy.js).
import { bootMark } from "../shared/protocol.js";
import { checkedSnapshot } from "./snapshot-file.js";
import {
  BUNDLE_AFTER_WHEELS,
  countedGet,
  signal,
  WHEELS_AFTER_SNAPSHOT,
  WHEELS_WITH_PACKAGED_SNAPSHOT,
  whenShare,
} from "./download-order.js";
import { afterSilence, ANSWER_MS, bodyBytes, dropLate, within } from "./patience.js";
import { prepareWheel, unzipArchive, wheelsCover } from "./wheels.js";

/**
 * The bytes at `url`; rejects with "<what> could not be fetched (HTTP …)" on an error status. A
 * download that breaks off (a dropped connection, a damaged compressed copy, no answer for
 * `ANSWER_MS`, a body that stalls for `STALLED_MS`; patience.js) is asked for once more: the
 * second answer may come from another source (twins.js falls back to the file). `get` fetches
 * (the worker's `fetch`, unless a caller that wraps it passes the one it wraps).
 */
export async function fetchBytes(url, what, tries = 2, get = (href) => fetch(href)) {
  const again = (error) => {
    const why = error?.message ?? error;
    if (tries <= 1) throw new Error(`${what} could not be fetched (${why})`);
    console.warn(`promptdojo: ${what} broke off (${why}); fetching it again`);
    return fetchBytes(url, what, tries - 1, get);
  };
  let response;
  try {
    // Where fetch is wrapped (twins.js, offline-copy.js), it reads the first bytes before it
    // answers: a connection that drops before a slow thread reads them rejects here.
    const waited = `no answer came for ${ANSWER_MS / 1000} s`;
    response = await within(get(url), ANSWER_MS, waited, dropLate);
  } catch (error) {
    return again(error);
  }
  if (!response.ok) throw new Error(`${what} could not be fetched (HTTP ${response.status})`);
  try {
    return await bodyBytes(response);
  } catch (error) {
    return again(error);
  }
}

/**
 * The snapshot at `url`, checked against its SHA-256 and unpacked; rejects with the reason.
 * `halfway()` is called once `WHEELS_AFTER_SNAPSHOT` of its `size` bytes have come, or at once
 * for a snapshot that holds packages (download-order.js).
 */
async function downloadSnapshot({ url, sha256, size, packages }, halfway = () => {}) {
  const share = packages ? WHEELS_WITH_PACKAGED_SNAPSHOT : WHEELS_AFTER_SNAPSHOT;
  const onBytes = whenShare(size, share, halfway);
  const bytes = await fetchBytes(url, "the snapshot", 2, countedGet(onBytes));
  bootMark("snapshot-fetched");
  const snapshot = await checkedSnapshot(bytes, sha256);
  bootMark("snapshot-checked");
  return snapshot;
}

/**
 * One wheel (`{url, compiled, ...}`), prepared for `installWheels`: its compiled archive (the
 * wheel's files with the bytecode of the modules a lesson loads, promptdojo.pyodide.bytecode)
 * where there is one, checked against its own SHA-256. An archive that cannot be fetched or
 * used only costs time: the wheel itself is prepared instead, and the console says why.
 * `onBytes` hears how many of the archive's bytes have come (Infinity once it is given up).
 */
export async function downloadWheel({ url, compiled, ...wheel }, onBytes = () => {}) {
  if (compiled) {
    const { url: compiledUrl, file_name, sha256 } = compiled;
    try {
      const bytes = fetchBytes(compiledUrl, file_name, 2, countedGet(onBytes));
      bytes.then(() => bootMark("compiled-fetched"), () => {});
      const ready = await prepareWheel({ ...wheel, file_name, sha256, bytes });
      bootMark("compiled-prepared");
      return { ...ready, bytecode: true };
    } catch (error) {
      const why = String(error?.message ?? error).split("\n")[0];
      console.warn(`promptdojo: ${wheel.name} installs from its wheel, without bytecode (${why})`);
    }
  }
  onBytes(Infinity); // what comes next (the learner bundle) waits no longer for this wheel
  return prepareWheel({ ...wheel, bytes: fetchBytes(url, wheel.file_name) });
}

/**
 * `say(message)` for what the compressed copies did (twins.js), except for the compiled wheels':
 * those are optional (`downloadWheel` falls back to the wheel), so a learner's page says nothing
 * of them, and the console alone hears it.
 * @param {import("../shared/contract.js").KernelConfig} config
 */
export function quietForCompiled(config, say) {
  const optional = (config.wheels ?? []).map((w) => w.compiled?.file_name).filter(Boolean);
  return (message) => {
    if (optional.some((name) => message.includes(name))) console.warn(message);
    else say(message);
  };
}

/**
 * The lesson's wheels (in install order), prepared for `installWheels`. `nearlyDone()` is called
 * once `BUNDLE_AFTER_WHEELS` of their compiled archives' bytes have come (download-order.js); at
 * once if any wheel has no compiled archive of known size.
 */
function downloadWheels(wheels, nearlyDone = () => {}) {
  const sizes = wheels.map((wheel) => wheel.compiled?.size ?? 0);
  const total = sizes.every((size) => size > 0) ? sizes.reduce((a, b) => a + b, 0) : 0;
  const onTotal = whenShare(total, BUNDLE_AFTER_WHEELS, nearlyDone);
  const received = wheels.map(() => 0);
  const onBytes = (i) => (bytes) => {
    received[i] = bytes; // a download asked for again counts from zero
    onTotal(received.reduce((a, b) => a + b, 0));
  };
  return Promise.all(wheels.map((wheel, i) => downloadWheel(wheel, onBytes(i))));
}

/**
 * The learner bundle at `url`, unzipped: here rather than in the kernel worker, whose thread is
 * busy importing numpy when the bundle comes (download-order.js). Rejects with the reason.
 */
async function downloadBundle(url) {
  const bytes = await fetchBytes(url, "the learner bundle");
  return unzipArchive(new Uint8Array(bytes), "the learner bundle");
}

/** The downloads, by the name their result comes back under; each given the page's config. */
export const JOBS = {
  snapshot: {
    wanted: (config) => Boolean(config.snapshot),
    run: (config, { halfway } = {}) => downloadSnapshot(config.snapshot, halfway),
  },
  wheels: {
    // Only wheels the boot will install (boot.js): else loadPackage installs the packages.
    wanted: (config) => wheelsCover(config.wheels ?? [], config.packages ?? []),
    run: (config, { nearlyDone } = {}) => downloadWheels(config.wheels, nearlyDone),
  },
  bundle: {
    wanted: (config) => Boolean(config.bundleUrl),
    run: (config) => downloadBundle(config.bundleUrl),
  },
};

/**
 * Post this worker's resource timings (`[url, transferSize]` pairs) with `post` as each download
 * completes: the page adds them up and shows the total while Python boots. Returns `stop()`.
 */
export function watchDownloads(post) {
  if (typeof PerformanceObserver === "undefined") return () => {};
  const observer = new PerformanceObserver((list) => {
    post(list.getEntries().map((entry) => [entry.name, entry.transferSize || 0]));
  });
  observer.observe({ type: "resource", buffered: true });
  return () => observer.disconnect();
}

/** The distinct ArrayBuffers under `value` (a job's result), to move rather than copy. */
export function transferables(value, found = new Set()) {
  if (value instanceof ArrayBuffer) found.add(value);
  else if (ArrayBuffer.isView(value)) found.add(value.buffer);
  else if (value instanceof WebAssembly.Module) return [...found];
  else if (value && typeof value === "object") {
    for (const item of Object.values(value)) transferables(item, found);
  }
  return [...found];
}

/**
 * How long a download worker may stay silent, once it is given its job, before the job is done
 * here instead. It says `started` the moment the job reaches it, and then `progress` while the
 * job moves on (its bytes arrive, a step of it ends, a library compiles, a request waits for its
 * answer; download-worker.js), so this covers its script's arrival and start, which WebKit was
 * seen to leave hanging, and a job that stops moving halfway (a download that stalls once its
 * bytes have begun): either way the boot waited for ever.
 */
export const DOWNLOAD_WORKER_SILENT_MS = 10_000;

/** Start a download worker, or say why it cannot start. */
function startHelper(url, name) {
  if (typeof Worker !== "function") return { why: "this browser has no workers inside workers" };
  try {
    return { helper: new Worker(url, { type: "module", name: `promptdojo download: ${name}` }) };
  } catch (error) {
    return { why: `the download worker did not start (${error?.message ?? error})` };
  }
}

/**
 * Run the job `name` in a download worker of its own (each job has its own thread: unpacking a
 * wheel does not hold up the snapshot's arrival), or here if that worker cannot start or fails.
 * The worker starts at once; the job waits for `gate` (a promise), if there is one. Returns
 * `{result, stop}`: the job's promise, and what ends the worker. `onEntries` gets the worker's
 * resource timings, `onNote` its notes; `events` (by name: `halfway`, `nearlyDone`) what a job
 * says of its progress (download-order.js); `onFallBack` the reason the job ran here.
 */
function runInHelper(config, name, { onEntries, onNote, events }, onFallBack, gate) {
  // The job in this thread, once its gate is open.
  const inThisThread = () => Promise.resolve(gate).then(() => JOBS[name].run(config, events));
  const { helper, why } = startHelper(config.downloadWorkerUrl, name);
  if (!helper) {
    onFallBack(why);
    return { result: inThisThread(), stop() {} };
  }
  let settle = null; // until the job is answered, here or by the worker
  const result = new Promise((resolve, reject) => (settle = { resolve, reject }));
  const silent = `the download worker said nothing for ${DOWNLOAD_WORKER_SILENT_MS / 1000} s`;
  let heard = () => {}; // ends the watch on the worker, which starts when it is given the job
  let given = false;
  const watch = () => {
    heard(); // each word from the worker starts its patience again
    if (given && settle) heard = afterSilence(DOWNLOAD_WORKER_SILENT_MS, () => runHere(silent));
  };
  const take = () => {
    heard();
    const pending = settle;
    settle = null;
    return pending;
  };
  const runHere = (reason) => {
    helper.terminate();
    const pending = take();
    if (!pending) return;
    onFallBack(reason);
    inThisThread().then(pending.resolve, pending.reject);
  };
  helper.onerror = (event) => {
    event.preventDefault();
    runHere(`the download worker failed (${event.message || "its script did not load"})`);
  };
  helper.onmessageerror = () => runHere("its result could not be moved to the kernel worker");
  helper.onmessage = ({ data }) => {
    watch();
    if (data.started || "progress" in data) return;
    if (data.entries) return onEntries(data.entries);
    if (data.note) return onNote(data.note);
    if (data.event) return events[data.event]?.();
    if ("retry" in data) return runHere(data.retry);
    const pending = take();
    if (!pending) return;
    if ("error" in data) pending.reject(new Error(data.error));
    else pending.resolve(data.value);
  };
  const give = () => {
    if (!settle) return; // done here already
    given = true;
    watch();
    helper.postMessage({ name, config });
  };
  if (gate) gate.then(give);
  else give();
  return {
    result,
    stop() {
      heard();
      settle = null; // a job still waiting for its gate is never given
      helper.terminate();
    },
  };
}

/**
 * Start the downloads a boot needs (`config`: the page's kernel config), each in a download
 * worker (`config.downloadWorkerUrl`), or in this thread where that cannot start. Returns
 * `{snapshot, wheels, bundle, where(), stop()}`: a promise per job (undefined when there is
 * nothing to fetch; it rejects with the reason a download failed; the bundle's is the learner
 * bundle unzipped, for boot.js), where they ran ("download worker",
 * "kernel worker" once any of them had to run here, or null when nothing was to be downloaded),
 * and `stop()`, which ends the download workers once the boot no longer needs them. `onEntries`
 * gets the download workers' resource timings (`[url, transferSize]` pairs), which the page adds
 * to the bytes it shows; `onNote` what they say of a compressed copy they could not use.
 * @param {import("../shared/contract.js").KernelConfig} config
 */
export function startDownloads(config, onEntries = () => {}, onNote = console.warn) {
  const names = Object.keys(JOBS).filter((name) => JOBS[name].wanted(config));
  let where = names.length ? "download worker" : null;
  const onFallBack = (why) => {
    // Said once per boot: the first reason is the one to act on.
    if (where !== "kernel worker") {
      console.warn(`promptdojo: downloading in the kernel worker: ${why}`);
    }
    where = "kernel worker";
  };
  // The order the downloads end in (download-order.js): the wheels start once half the snapshot
  // has come (of a snapshot of known size), and the learner bundle once nearly all the wheels
  // have; each also once the download before it has ended, however it ended, or at once without
  // one.
  const halfway = signal();
  const nearlyDone = signal();
  const events = { halfway: halfway.open, nearlyDone: nearlyDone.open };
  const sized = config.snapshot?.size > 0 && names.includes("snapshot");
  const gates = { wheels: sized ? halfway.opened : null, bundle: nearlyDone.opened };
  const listeners = { onEntries, onNote, events };
  const jobs = names.map((name) => [
    name,
    runInHelper(config, name, listeners, onFallBack, gates[name]),
  ]);
  const ended = { snapshot: halfway.open, wheels: nearlyDone.open };
  for (const [name, { result }] of jobs) {
    result.catch(() => {}); // the boot that awaits it reports it
    result.finally(ended[name]).catch(() => {});
  }
  if (!names.includes("wheels")) nearlyDone.open();
  return {
    ...Object.fromEntries(jobs.map(([name, { result }]) => [name, result])),
    where: () => where,
    stop: () => jobs.forEach(([, job]) => job.stop()),
  };
}
