// The one inline script of a step page (promptdojo.web.isolation), at its top so that it runs
// before anything else is fetched or parsed.
//
// On an isolated page it starts the kernel worker at once, while the rest of the page still
// parses and loads: the worker's boot is the long pole of a visit, and start.js, which runs only
// once its own file has arrived and the parser has let it, adopts the worker (kernel-client.js). Its
// first message is the boot message of protocol.js, `{config, interrupt}`.
//
// On a host that sent no isolation headers, it registers the service worker (sw.js adds the
// headers), stops loading the rest of this page, hands the worker the boot's first files to fetch
// (the kernel config's `earlyFiles`: the link is busy while the page reloads, and the reloaded
// page's workers get those responses, sw/early-files.js), and reloads as soon as that worker
// controls it; if the worker fails, the reloaded page runs without isolation and says why.
// start.js awaits the answer: {isolated: true}, {reloading: true}, or {isolated: false, why}
// (cells run; Stop then restarts Python).
self.promptdojoEarlyKernel = (() => {
  const meta = document.querySelector('meta[name="promptdojo-kernel"]');
  // Isolation is not shared memory (static/js/page/features.js): without it, start.js starts the worker.
  if (!self.crossOriginIsolated || typeof SharedArrayBuffer !== "function" || !meta) return null;
  try {
    const config = JSON.parse(meta.content);
    const interrupt = new Int32Array(new SharedArrayBuffer(4));
    // The step this page opens (protocol.js, `pageStep`).
    const step = /\/(\d+)\/?(index\.html)?$/.exec(location.pathname);
    const boot = { config, step: step ? Number(step[1]) : null };
    // The boot message rides in the worker's name too (protocol.js, `bootFromName`): the worker
    // starts its downloads as soon as its script runs. A message posted to it reaches it only
    // once this page's thread is free, which is busy with the page's scripts by then.
    const name = `promptdojo-kernel ${JSON.stringify(boot)}`;
    const worker = new Worker(config.workerUrl, { type: "module", name });
    // What the worker says before start.js takes it over is kept, and replayed to the client.
    const early = { config, worker, interrupt, events: [] };
    worker.onmessage = (event) => early.events.push(event);
    worker.onerror = (event) => {
      event.preventDefault(); // reported by the client, once it has replayed this
      early.events.push(event);
    };
    performance.mark("pd:worker-start");
    // The boot message of protocol.js, which brings the interrupt buffer.
    worker.postMessage({ ...boot, interrupt });
    return early;
  } catch {
    return null; // start.js starts the worker itself, and reports what fails
  }
})();
self.promptdojoIsolation = (async (script) => {
  const RELOADED = "promptdojo-isolation-reload";
  const CONTROL_TIMEOUT_MS = 10000;
  const workers = navigator.serviceWorker;
  /** Ask the registered service worker to fetch the boot's first files (sw.js, SW_MESSAGES.
   * EARLY_FILES of offline-rules.js). The reload does not wait for it: the workers of the reloaded
   * page ask for those files a while later, and the service worker skips any already asked for. */
  const fetchEarly = (registration) => {
    try {
      const meta = document.querySelector('meta[name="promptdojo-kernel"]');
      const files = JSON.parse(meta?.content ?? "{}").earlyFiles ?? [];
      const worker = registration.installing ?? registration.waiting ?? registration.active;
      if (files.length) worker?.postMessage({ type: "early-files", files });
    } catch {
      // the reloaded page's workers fetch every file themselves, as without it
    }
  };
  try {
    if (self.crossOriginIsolated) {
      sessionStorage.removeItem(RELOADED);
      return { isolated: true };
    }
    if (!workers || !self.isSecureContext) {
      return { isolated: false, why: "this page is not cross-origin isolated" };
    }
    const failed = sessionStorage.getItem(RELOADED);
    if (failed) {
      return { isolated: false, why: failed };
    }
    const controlled = new Promise((resolve) => {
      if (workers.controller) resolve(true);
      workers.addEventListener("controllerchange", () => resolve(true), { once: true });
      setTimeout(() => resolve(Boolean(workers.controller)), CONTROL_TIMEOUT_MS);
    });
    const { worker, scope } = script.dataset;
    // What the reloaded page says if it is still not isolated. Stored before this page stops: a
    // browser that cannot store it gets a working page without isolation instead.
    let why = "the service worker could not make this page cross-origin isolated";
    sessionStorage.setItem(RELOADED, why);
    const registered = workers.register(worker, { scope, updateViaCache: "none" });
    // This page is reloaded either way: stop parsing and loading the rest of it, so that the
    // service worker starts on an idle machine. If it fails, the reloaded page runs without
    // isolation and says why.
    window.stop();
    try {
      fetchEarly(await registered);
      if (!(await controlled)) why = "the service worker did not take control of this page";
    } catch (error) {
      why = `the service worker did not install (${error?.message ?? error})`;
    }
    try {
      sessionStorage.setItem(RELOADED, why);
    } catch {
      // the first reason stays
    }
    location.reload();
    return { reloading: true };
  } catch (error) {
    return { isolated: false, why: `this page could not be isolated (${error?.message ?? error})` };
  }
})(document.currentScript);
