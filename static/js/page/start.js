// Makes the page's kernel client before the editor bundle has loaded. On an isolated page the
// step page's inline script has already started the worker, which the client adopts; elsewhere
// the client starts it. The worker asks for the big files itself as it starts; a page that
// reloads under the service worker (the inline script's other job) starts none.
import { noSharedMemory } from "./features.js";
import { KernelClient } from "./kernel-client.js";
import { keepOffline, pageIsolation } from "./offline.js";

const config = document.querySelector('meta[name="promptdojo-kernel"]')?.content;
if (config) {
  performance.mark("pd:boot-start");
  // On a host that sends no isolation headers, the service worker supplies them: the page's
  // inline script has registered it and reloads the page once it is in control.
  const isolation = await pageIsolation();
  if (!isolation.reloading) {
    // Why Stop must restart Python here (no shared memory: features.js), or null.
    const isolationNote = isolation.why ?? noSharedMemory();
    const kernel = new KernelClient(JSON.parse(config), { isolationNote });
    // Marked when each phase reached the page, also those the early worker said before now.
    kernel.addPhaseListener((phase, detail, at) => {
      const mark = (name) => performance.mark(name, { startTime: at });
      mark(`pd:phase-${phase}`);
      if (phase === "python-ready") mark("pd:python-ready");
      if (phase === "ready" && detail.loaded?.includes("numpy")) mark("pd:numpy-ready");
      if (phase === "ready") mark("pd:ready");
    });
    // The course is cached for offline use once Python is ready, so it never slows the boot.
    let offline = false;
    kernel.addPhaseListener((phase) => {
      if (phase !== "ready" || offline) return;
      offline = true;
      keepOffline();
    });
    window.promptdojoKernel = kernel;
    // This script is async: the page bundle may already be waiting for the kernel.
    window.dispatchEvent(new Event("promptdojo:kernel"));
  }
}
