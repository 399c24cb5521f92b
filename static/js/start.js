// Starts the kernel worker as early as the page allows, before the editor bundle has loaded:
// Pyodide's download and start-up are the long pole of a learner's first visit.
import { KernelClient } from "./kernel.js";

const config = document.querySelector('meta[name="promptdojo-kernel"]')?.content;
if (config) {
  performance.mark("pd:boot-start");
  const kernel = new KernelClient(JSON.parse(config));
  kernel.addPhaseListener((phase, detail) => {
    performance.mark(`pd:phase-${phase}`);
    if (phase === "python-ready") performance.mark("pd:python-ready");
    if (phase === "ready" && detail.loaded?.includes("numpy")) performance.mark("pd:numpy-ready");
    if (phase === "ready") performance.mark("pd:ready");
  });
  window.promptdojoKernel = kernel;
  // This script is async: the page bundle may already be waiting for the kernel.
  window.dispatchEvent(new Event("promptdojo:kernel"));
}
