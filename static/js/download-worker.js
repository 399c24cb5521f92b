// A download worker (downloads.js): the kernel worker sends it one job's name and the page's
// kernel config; it answers with `{name, value}` (its buffers moved, not copied), `{name, error}`
// (why the download failed: the boot reports it and falls back), or `{name, retry}` (the result
// could not be moved: the kernel worker downloads it itself). `{entries}` messages carry its
// resource timings for the page's byte count.
import { JOBS, transferables } from "./downloads.js";

function watchDownloads() {
  if (typeof PerformanceObserver === "undefined") return;
  new PerformanceObserver((list) => {
    const entries = list.getEntries().map((entry) => [entry.name, entry.transferSize || 0]);
    self.postMessage({ entries });
  }).observe({ type: "resource", buffered: true });
}

function answer(name, value) {
  try {
    self.postMessage({ name, value }, transferables(value));
  } catch (error) {
    self.postMessage({ name, retry: String(error?.message ?? error) });
  }
}

self.onmessage = ({ data: { name, config } }) => {
  self.onmessage = null; // one job per download worker
  watchDownloads();
  JOBS[name].run(config).then(
    (value) => answer(name, value),
    (error) => self.postMessage({ name, error: String(error?.message ?? error) }),
  );
};
