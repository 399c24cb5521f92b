// The service worker's rules, kept apart from its event wiring so Node can test them.

/**
 * Milliseconds the service worker's activation waits for it to take control of the open pages
 * (`clients.claim()`), which normally takes a few. See {@link settledWithin}.
 */
export const CLAIM_WAIT_MS = 1000;

/**
 * A promise that resolves once `promise` has settled or `ms` milliseconds have passed, whichever
 * comes first, and never rejects. The service worker's activation waits on this rather than on
 * `clients.claim()` itself: every request of the scope, navigations included, waits until the
 * worker is activated, and Firefox can leave a claim unsettled (a page whose own worker never
 * started) until it kills the service worker a minute later, failing those requests.
 */
export function settledWithin(promise, ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}

/** Every cache of ours is named this, then the course's version. */
export const CACHE_PREFIX = "promptdojo-course-";

/** The cache holding version `version` of the course. */
export function cacheName(version) {
  return CACHE_PREFIX + version;
}

/** Of `names` (every cache of the origin), ours that are not version `version`'s. */
export function otherVersions(names, version) {
  return names.filter((name) => name.startsWith(CACHE_PREFIX) && name !== cacheName(version));
}

/**
 * Whether the worker `me` (a service worker's own `ServiceWorker`, where the browser gives one)
 * is being replaced in `registration` by a newer one, a new version: that one then owns the
 * caches, and `me` must not delete them.
 */
export function superseded({ installing, waiting, active }, me) {
  if (installing || waiting) return true;
  return Boolean(me && active && active !== me);
}

/**
 * Whether `pathname` is WebAssembly compiled by streaming (the core's `pyodide.asm.wasm`), whose
 * compiled code Chromium keeps in the cache entry behind the browser's own response: the HTTP
 * cache's. A later visit then compiles only what it did not keep. A response the service worker
 * answers from Cache Storage, one a worker reads from there, or one made anew in JavaScript
 * compiled all of it again, every visit. So the browser fetches such a file itself, past the
 * service worker (sw.js); the workers ask the offline copy for it only when that fails
 * (offline-copy.js), and hand on its response as it came (twins.js).
 */
export function keepsCompiledCode(pathname) {
  return pathname.endsWith(".wasm");
}

/**
 * How a request for `pathname` is answered: "page" (the network first, the cached copy when it
 * fails: pages change with each version), "file" (content hashed or versioned: the cache first),
 * or "other" (the network, then any cached copy).
 */
export function kindOf(pathname, course, navigate = false) {
  if (navigate || course.pages.includes(pathname)) return "page";
  if (course.files.includes(pathname)) return "file";
  return "other";
}

/**
 * The `[name, value]` pairs of `wanted` (the server's own headers: COOP, COEP, CSP, ...) that
 * `headers` lacks: a static host that sends none gets all of them from the service worker.
 */
export function missingHeaders(headers, wanted) {
  return Object.entries(wanted).filter(([name]) => !headers.has(name));
}

/**
 * The messages between a page and the service worker, by `type`. The page asks it to keep the
 * course (`{type: CACHE_COURSE}`), a waiting worker to take over at once (`TAKE_OVER`), and, as a
 * first visit reloads, to fetch the boot's first files (`{type: EARLY_FILES, files}`;
 * templates/_isolation.js writes this type out, as it imports nothing); the
 * worker tells every page how the copy goes: `{type: PROGRESS, done, total}`, `READY`, and
 * `{type: FAILED, message}`.
 */
export const SW_MESSAGES = Object.freeze({
  CACHE_COURSE: "cache-course",
  TAKE_OVER: "take-over",
  EARLY_FILES: "early-files",
  PROGRESS: "offline-progress",
  READY: "offline-ready",
  FAILED: "offline-failed",
});

/** The status line of the offline mark for a message from the service worker. */
export function offlineText(message) {
  if (message.type === SW_MESSAGES.PROGRESS) {
    return `Saving for offline… ${message.done} of ${message.total} files`;
  }
  if (message.type === SW_MESSAGES.READY) return "✓ Available offline";
  if (message.type === SW_MESSAGES.FAILED) return `Not saved for offline: ${message.message}`;
  return null;
}

/** How long the service worker keeps a file fetched early that no request has taken: a page that
 * reloads asks for it within seconds, so one left longer belongs to a boot that went elsewhere. */
export const EARLY_FILE_KEEP_MS = 60000;
