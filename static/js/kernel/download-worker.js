// A download worker (downloads.js): the kernel worker sends it one job's name and the page's
// kernel config, and it answers as shared/contract.js says (DownloadJob, DownloadAnswer): the
// job's value (its buffers moved), why it failed, or that it must be done again in the kernel
// worker; first, that it has the job; and, unasked, its resource timings and its notes.
import { JOBS, quietForCompiled, transferables, watchDownloads } from "./downloads.js";
import { unchangingFiles, withOfflineCopy } from "./offline-copy.js";
import { withTwins, zstdLoader } from "../shared/twins.js";

/** Answer the job `name` with its `value`, moved; or with `retry` if it cannot be moved. */
function answer(name, value) {
  try {
    self.postMessage({ name, value }, transferables(value));
  } catch (error) {
    self.postMessage({ name, retry: String(error?.message ?? error) });
  }
}

self.onmessage = ({ data: { name, config } }) => {
  self.onmessage = null; // one job per download worker
  self.postMessage({ started: name }); // the kernel worker's watch (downloads.js) ends here
  // The job's files are read from the course's offline copy first (offline-copy.js), through
  // their compressed twins where the export has them (twins.js).
  self.fetch = withTwins(withOfflineCopy(self.fetch, unchangingFiles(config)), config.twins, {
    sniffed: unchangingFiles(config),
    loadZstd: zstdLoader(config),
    // The kernel worker says it on "ready" (a compiled wheel's: the console only).
    onFallBack: quietForCompiled(config, (note) => self.postMessage({ note })),
  });
  watchDownloads((entries) => self.postMessage({ entries }));
  // What the job says of its progress, by name (download-order.js): half the snapshot has come,
  // the wheels have nearly all come. The kernel worker starts the next download then.
  const say = (event) => () => self.postMessage({ event });
  JOBS[name].run(config, { halfway: say("halfway"), nearlyDone: say("nearlyDone") }).then(
    (value) => answer(name, value),
    (error) => self.postMessage({ name, error: String(error?.message ?? error) }),
  );
};
