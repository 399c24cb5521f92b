// A download worker (downloads.js): the kernel worker sends it one job's name and the page's
// kernel config, and it answers as shared/contract.js says (DownloadJob, DownloadAnswer): the
// job's value (its buffers moved), why it failed, or that it must be done again in the kernel
// worker; first, that it has the job, and then that the job moves on; and, unasked, its resource
// timings and its notes.
import { counted } from "./download-order.js";
import { JOBS, quietForCompiled, transferables, watchDownloads } from "./downloads.js";
import { unchangingFiles, withOfflineCopy } from "./offline-copy.js";
import { ANSWER_MS } from "./patience.js";
import { withTwins, zstdLoader } from "../shared/twins.js";

/** Answer the job `name` with its `value`, moved; or with `retry` if it cannot be moved. */
function answer(name, value) {
  try {
    self.postMessage({ name, value }, transferables(value));
  } catch (error) {
    self.postMessage({ name, retry: String(error?.message ?? error) });
  }
}

/**
 * How often at most this worker says its job moves on. The kernel worker gives a worker that
 * says nothing for DOWNLOAD_WORKER_SILENT_MS (downloads.js) up, and does the job itself.
 */
const PROGRESS_EVERY_MS = 1000;
/**
 * Say `progress` (the bytes this worker's downloads have read so far) when the job moves on, at
 * most every PROGRESS_EVERY_MS: as the bytes of any of its downloads arrive, at each step of the
 * job (its `bootMark`s: a download checked, a library compiled), while a library compiles (a
 * compile always ends), and while a request waits for its answer (for ANSWER_MS at most: on a
 * slow link it may wait its turn for a connection; fetchBytes then asks once more). Returns
 * `fetchImpl` with its responses counted.
 */
function sayProgress(fetchImpl) {
  let bytes = 0;
  let saidAt = -Infinity;
  const moved = () => {
    if (Date.now() - saidAt < PROGRESS_EVERY_MS) return;
    saidAt = Date.now();
    self.postMessage({ progress: bytes });
  };
  let compiling = 0; // libraries being compiled (wheels.js marks each start and end)
  if (typeof PerformanceObserver === "function") {
    new PerformanceObserver((list) => {
      for (const { name } of list.getEntries()) {
        if (name.endsWith(":library-compiling")) compiling += 1;
        if (name.endsWith(":library-compiled")) compiling -= 1;
      }
      moved();
    }).observe({ type: "mark" });
  }
  const asked = new Set(); // when each request still waiting for its answer was made
  setInterval(() => {
    const waiting = [...asked].some((at) => Date.now() - at.time < ANSWER_MS);
    if (waiting || compiling > 0) moved();
  }, PROGRESS_EVERY_MS);
  return (input, init) => {
    const at = { time: Date.now() };
    asked.add(at);
    return fetchImpl(input, init)
      .finally(() => asked.delete(at))
      .then((response) => {
        let before = 0; // this response's bytes already counted
        return counted(response, (received) => {
          bytes += received - before;
          before = received;
          moved();
        });
      });
  };
}

self.onmessage = ({ data: { name, config } }) => {
  self.onmessage = null; // one job per download worker
  self.postMessage({ started: name }); // each word starts the kernel worker's patience again
  // The job's files are read from the course's offline copy first (offline-copy.js), through
  // their compressed twins where the export has them (twins.js).
  const fetchFiles = withTwins(withOfflineCopy(self.fetch, unchangingFiles(config)), config.twins, {
    sniffed: unchangingFiles(config),
    loadZstd: zstdLoader(config),
    // The kernel worker says it on "ready" (a compiled wheel's: the console only).
    onFallBack: quietForCompiled(config, (note) => self.postMessage({ note })),
  });
  self.fetch = sayProgress(fetchFiles);
  watchDownloads((entries) => self.postMessage({ entries }));
  // What the job says of its progress, by name (download-order.js): half the snapshot has come,
  // the wheels have nearly all come. The kernel worker starts the next download then.
  const say = (event) => () => self.postMessage({ event });
  JOBS[name].run(config, { halfway: say("halfway"), nearlyDone: say("nearlyDone") }).then(
    (value) => answer(name, value),
    (error) => self.postMessage({ name, error: String(error?.message ?? error) }),
  );
};
