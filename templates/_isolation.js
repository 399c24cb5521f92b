// Cross-origin isolation where the host sent no headers for it (promptdojo.web.isolation): inline
// at the top of a step page, before anything else loads, it registers the service worker (sw.js
// adds the headers) and reloads the page as soon as that worker controls it. start.js awaits the
// answer: {isolated: true}, {reloading: true}, or {isolated: false, why} (cells run; Stop then
// restarts Python).
self.promptdojoIsolation = (async (script) => {
  const RELOADED = "promptdojo-isolation-reload";
  const CONTROL_TIMEOUT_MS = 10000;
  const workers = navigator.serviceWorker;
  try {
    if (self.crossOriginIsolated) {
      sessionStorage.removeItem(RELOADED);
      return { isolated: true };
    }
    if (!workers || !self.isSecureContext) {
      return { isolated: false, why: "this page is not cross-origin isolated" };
    }
    if (sessionStorage.getItem(RELOADED)) {
      return {
        isolated: false,
        why: "the service worker could not make this page cross-origin isolated",
      };
    }
    const controlled = new Promise((resolve) => {
      if (workers.controller) resolve(true);
      workers.addEventListener("controllerchange", () => resolve(true), { once: true });
      setTimeout(() => resolve(Boolean(workers.controller)), CONTROL_TIMEOUT_MS);
    });
    const { worker, scope } = script.dataset;
    try {
      await workers.register(worker, { scope, updateViaCache: "none" });
    } catch (error) {
      const why = `the service worker did not install (${error?.message ?? error})`;
      return { isolated: false, why };
    }
    if (!(await controlled)) {
      return { isolated: false, why: "the service worker did not take control of this page" };
    }
    sessionStorage.setItem(RELOADED, "1");
    location.reload();
    return { reloading: true };
  } catch (error) {
    return { isolated: false, why: `this page could not be isolated (${error?.message ?? error})` };
  }
})(document.currentScript);
