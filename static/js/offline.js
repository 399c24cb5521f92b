// The page's side of the service worker (sw.js): the course kept offline, with its progress and an
// "available offline" mark in the header, and what the step page's inline isolation script found
// (on hosts that cannot send the isolation headers, it registers the worker and reloads once).
//
// The worker lives at the site's base path, beside the assets folder this module is built into.
import { offlineText } from "./offline-rules.js";

const WORKER_URL = new URL("../sw.js", import.meta.url);
const SCOPE = new URL("../", import.meta.url).pathname;
/** How long a new worker may take to control the page before the offline mark gives up. */
const CONTROL_TIMEOUT_MS = 10_000;

let registration = null;

function serviceWorkers() {
  return "serviceWorker" in navigator && globalThis.isSecureContext;
}

function register() {
  registration ??= navigator.serviceWorker.register(WORKER_URL, {
    scope: SCOPE,
    updateViaCache: "none",
  });
  return registration;
}

/**
 * Register the service worker without asking it to cache anything: the index does this, so that
 * the step a learner opens from it is isolated at once, while the course's offline copy waits
 * for that step's Python (a copy started here would share the learner's link with its boot).
 */
export function registerWorker() {
  if (serviceWorkers()) register().catch(() => {});
}

/** Resolves true once a service worker controls this page, false after the timeout. */
function controlled() {
  if (navigator.serviceWorker.controller) return Promise.resolve(true);
  return new Promise((resolve) => {
    navigator.serviceWorker.addEventListener("controllerchange", () => resolve(true), {
      once: true,
    });
    setTimeout(() => resolve(Boolean(navigator.serviceWorker.controller)), CONTROL_TIMEOUT_MS);
  });
}

/**
 * Whether the page is cross-origin isolated (SharedArrayBuffer, so Stop interrupts Python), as
 * the page's inline isolation script (templates/_isolation.js) answers: `{isolated: true}`,
 * `{reloading: true}` (the page reloads under the service worker, which supplies the headers),
 * or `{isolated: false, why}` (cells still run; Stop then restarts Python).
 */
export function pageIsolation() {
  if (globalThis.promptdojoIsolation) return globalThis.promptdojoIsolation;
  const isolated = Boolean(globalThis.crossOriginIsolated);
  return Promise.resolve(
    isolated ? { isolated } : { isolated, why: "this page is not cross-origin isolated" },
  );
}

/** The header's "available offline" mark, made on first use. */
function offlineMark() {
  let mark = document.querySelector(".offline-status");
  if (!mark) {
    mark = document.createElement("span");
    mark.className = "offline-status";
    mark.setAttribute("role", "status");
    mark.setAttribute("aria-live", "polite");
    document.querySelector(".site-header")?.append(mark);
  }
  return mark;
}

/** Ask the controlling service worker to cache the whole course, and show how far it got. */
export async function keepOffline() {
  if (!serviceWorkers()) return;
  const mark = offlineMark();
  navigator.serviceWorker.addEventListener("message", (event) => {
    const text = offlineText(event.data ?? {});
    if (text === null) return;
    mark.textContent = text;
    mark.dataset.state = event.data.type.replace("offline-", "");
    mark.dataset.version = event.data.version;
  });
  const ask = () => navigator.serviceWorker.controller?.postMessage({ type: "cache-course" });
  // A new version's worker takes over (an update): it caches its own version.
  navigator.serviceWorker.addEventListener("controllerchange", ask);
  let worker;
  try {
    worker = await register();
  } catch {
    mark.remove();
    return;
  }
  // A page under an older version's worker asks the host for the new one now: the check the
  // browser schedules by itself after a navigation can come late, or before a new version was
  // published. A new worker takes over (above) and caches its own version; the old one is not
  // asked.
  const next = navigator.serviceWorker.controller ? await newVersion(worker) : null;
  if (next) {
    // Should the new worker fail to install, the old one keeps the course.
    next.addEventListener("statechange", () => next.state === "redundant" && ask());
    return;
  }
  if (await controlled()) ask();
}

/** The worker of another version that the host now serves, installing; else null. */
async function newVersion(registration) {
  try {
    await registration.update();
  } catch {
    return null; // offline, or the host is down: the cached version stays
  }
  return registration.installing ?? registration.waiting ?? null;
}
