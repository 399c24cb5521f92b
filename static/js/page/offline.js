// The page's side of the service worker (sw.js): the course kept offline, with its progress and an
// "available offline" mark in the header, and what the step page's inline isolation script found
// (on hosts that cannot send the isolation headers, it registers the worker and reloads once).
//
// The worker lives at the site's base path, beside the assets folder this module is built into.
import { noSharedMemory } from "./features.js";
import { offlineText, SW_MESSAGES } from "../shared/offline-rules.js";

const WORKER_URL = new URL("../sw.js", import.meta.url);
const SCOPE = new URL("../", import.meta.url).pathname;

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

/**
 * Whether the page is cross-origin isolated (SharedArrayBuffer, so Stop interrupts Python), as
 * the page's inline isolation script (templates/_isolation.js) answers: `{isolated: true}`,
 * `{reloading: true}` (the page reloads under the service worker, which supplies the headers),
 * or `{isolated: false, why}` (cells still run; Stop then restarts Python).
 */
export function pageIsolation() {
  if (globalThis.promptdojoIsolation) return globalThis.promptdojoIsolation;
  const why = noSharedMemory();
  return Promise.resolve(why ? { isolated: false, why } : { isolated: true });
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

/** Ask the course's service worker to cache the whole course, and show how far it got. */
export async function keepOffline() {
  if (!serviceWorkers()) return;
  const mark = offlineMark();
  navigator.serviceWorker.addEventListener("message", (event) => {
    const text = offlineText(event.data ?? {});
    // A word from an old version's worker that a new one replaced since is out of date.
    if (text === null || event.source?.state === "redundant") return;
    mark.textContent = text;
    mark.dataset.state = event.data.type.replace("offline-", "");
    mark.dataset.version = event.data.version;
  });
  const asked = new Set();
  let course = null; // the registration, once registered
  // A new version's worker takes over once the old one is idle. A message (or a request) that
  // wakes the old worker while the browser swaps it out can leave the new one waiting for
  // minutes (Chrome's lame-duck timer), even after skipWaiting: so while a new worker is on its
  // way, the old one is sent nothing, and the waiting one is told to take over (sw.js calls
  // skipWaiting again, which activates it at once if the old one is idle), also each time the
  // old one has answered.
  const newer = () => course?.installing ?? course?.waiting ?? null;
  const nudge = () => course?.waiting?.postMessage({ type: SW_MESSAGES.TAKE_OVER });
  // Every worker that is active, or controls this page, is asked once to cache its version; the
  // page may hear of a new one through any of these events, or know it already.
  const ask = () => {
    nudge();
    if (newer()) return;
    for (const worker of [navigator.serviceWorker.controller, course?.active]) {
      if (!worker || asked.has(worker) || worker.state === "redundant") continue;
      asked.add(worker);
      worker.postMessage({ type: SW_MESSAGES.CACHE_COURSE });
    }
  };
  navigator.serviceWorker.addEventListener("controllerchange", ask);
  navigator.serviceWorker.addEventListener("message", nudge);
  try {
    course = await register();
  } catch {
    course = null;
  }
  if (!course) {
    mark.remove(); // no service worker here (or one a test harness blocks)
    return;
  }
  const follow = (worker) => worker?.addEventListener("statechange", ask);
  course.addEventListener("updatefound", () => follow(course.installing));
  [course.installing, course.waiting, course.active].forEach(follow);
  // A page under an older version's worker asks the host for the new one first: the check the
  // browser schedules by itself after a navigation can come late, or before a new version was
  // published. A new worker is asked once it is active (above); else the current one now.
  if (navigator.serviceWorker.controller) {
    await course.update().catch(() => {}); // offline, or the host is down: the cached one stays
    follow(newer());
  }
  ask();
}
