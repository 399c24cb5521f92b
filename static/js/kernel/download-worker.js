// A download worker (downloads.js): the kernel worker sends it one job's name and the page's
// kernel config; it answers with `{name, value}` (its buffers moved, not copied), `{name, error}`
// (why the download failed: the boot reports it and falls back), or `{name, retry}` (the result
// could not be moved: the kernel worker downloads it itself). `{entries}` messages carry its
// resource timings for the page's byte count, `{note}` a compressed copy it could not use.
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
  // The job's files are read from the course's offline copy first (offline-copy.js), through
  // their compressed twins where the export has them (twins.js).
  self.fetch = withTwins(withOfflineCopy(self.fetch, unchangingFiles(config)), config.twins, {
    sniffed: unchangingFiles(config),
    loadZstd: zstdLoader(config),
    // The kernel worker says it on "ready" (a compiled wheel's: the console only).
    onFallBack: quietForCompiled(config, (note) => self.postMessage({ note })),
  });
  watchDownloads((entries) => self.postMessage({ entries }));
  JOBS[name].run(config).then(
    (value) => answer(name, value),
    (error) => self.postMessage({ name, error: String(error?.message ?? error) }),
  );
};
