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
  // How long the reload waits for the worker to say it has started the early files (it answers
  // at once). Past it the page reloads anyway: the worker skips any file a request asked for first,
  // and an older worker, which knows no such message, never answers.
  const EARLY_ANSWER_MS = 500;
  const workers = navigator.serviceWorker;
  /** Ask the registered service worker to fetch the boot's first files; resolves once it says it
   * has started them, or after `ms` (sw.js, SW_MESSAGES.EARLY_FILES of offline-rules.js). */
  const fetchEarly = (registration, ms) =>
    new Promise((resolve) => {
      try {
        const meta = document.querySelector('meta[name="promptdojo-kernel"]');
        const files = JSON.parse(meta?.content ?? "{}").earlyFiles ?? [];
        const worker = registration.installing ?? registration.waiting ?? registration.active;
        if (!files.length || !worker) return resolve();
        const answer = new MessageChannel();
        answer.port1.onmessage = () => resolve();
        setTimeout(resolve, ms);
        worker.postMessage({ type: "early-files", files }, [answer.port2]);
      } catch {
        resolve(); // the page reloads as before; its workers fetch every file themselves
      }
    });
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
      await fetchEarly(await registered, EARLY_ANSWER_MS);
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
