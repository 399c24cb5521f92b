// The service worker's rules, kept apart from its event wiring so Node can test them.

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

/** The status line of the offline mark for a message from the service worker. */
export function offlineText(message) {
  if (message.type === "offline-progress") {
    return `Saving for offline… ${message.done} of ${message.total} files`;
  }
  if (message.type === "offline-ready") return "✓ Available offline";
  if (message.type === "offline-failed") return `Not saved for offline: ${message.message}`;
  return null;
}
