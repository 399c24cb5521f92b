// The service worker, served as `sw.js` at the site's base path after one line of config,
// `self.promptdojoCourse` (promptdojo.web.offline): {version, pages, files, headers}.
//
// 1. Cross-origin isolation on hosts that cannot send headers: every response gets the headers
//    the server would have sent (COOP, COEP, CSP...) where they are missing.
// 2. A first visit's boot files, fetched while its page reloads (early-files.js).
// 3. The whole course offline: asked by a page, it caches every page and file of its version in
//    one cache, marks it complete, and only then deletes the caches of other versions. Pages
//    come from the network first; offline, from one complete cache (never two versions mixed).
//    Files are content hashed or versioned, so any cached copy is the right one.
import {
  CLAIM_WAIT_MS,
  cacheName,
  keepsCompiledCode,
  kindOf,
  missingHeaders,
  otherVersions,
  settledWithin,
  superseded,
  SW_MESSAGES,
} from "../shared/offline-rules.js";
import { withTwins } from "../shared/twins.js";
import { earlyFiles } from "./early-files.js";

const course = self.promptdojoCourse;
const CACHE = cacheName(course.version);
/** Stored in a cache once it holds every page and file of its version. */
const COMPLETE = new URL("promptdojo-offline-complete", self.registration.scope).href;
const LOOKUP = { ignoreVary: true };
/** Responses that carry the isolation headers: documents and workers (subresources need none). */
const ISOLATED = new Set(["document", "iframe", "worker", "sharedworker"]);
/** The boot's first files, fetched as a first visit reloads, until its requests take them. */
const early = earlyFiles();
/** True once a complete cache exists: only then do files go through this worker. */
let complete = false;
completeCaches().then((found) => {
  complete ||= found.length > 0;
});

self.addEventListener("install", () => self.skipWaiting());
// Open pages come under this worker at once; its activation does not wait long for that
// (offline-rules.js: settledWithin).
self.addEventListener("activate", (event) => {
  event.waitUntil(settledWithin(self.clients.claim(), CLAIM_WAIT_MS));
});

/** `response` with the server's headers where the host sent none. */
function withHeaders(response) {
  if (response.status === 0 || response.type === "opaqueredirect") return response;
  const missing = missingHeaders(response.headers, course.headers);
  if (!missing.length) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of missing) headers.set(name, value);
  const { status, statusText } = response;
  return new Response(response.body, { status, statusText, headers });
}

/** Our complete caches, this version's first. */
async function completeCaches() {
  const names = (await caches.keys()).filter((name) => name.startsWith(cacheName("")));
  names.sort((a, b) => (b === CACHE) - (a === CACHE));
  const complete = [];
  for (const name of names) {
    const cache = await caches.open(name);
    if (await cache.match(COMPLETE)) complete.push(cache);
  }
  return complete;
}

/** A page from the first complete cache: one version's pages go with that version's files. */
async function cachedPage(request) {
  const [cache] = await completeCaches();
  return cache?.match(request, { ...LOOKUP, ignoreSearch: true });
}

async function respond(request, kind, isolate) {
  const finish = isolate ? withHeaders : (response) => response;
  if (kind === "file") {
    const hit = await caches.match(request, LOOKUP);
    if (hit) return finish(hit);
  }
  try {
    return finish(await fetch(request));
  } catch (error) {
    const hit = kind === "page" ? await cachedPage(request) : await caches.match(request, LOOKUP);
    if (hit) return finish(hit);
    throw error;
  }
}

/**
 * An export's loaders and assets with a gzip twin (twins.js): asked for one, this worker answers
 * with its twin decoded, from the offline copy or the network. The workers fetch the big zstd
 * twins themselves.
 */
const gzipTwins = Object.fromEntries(
  Object.entries(course.twins ?? {}).filter(([, [, coding]]) => coding === "gzip"),
);
const twinned = new Set(Object.keys(gzipTwins).map((url) => new URL(url, self.location).pathname));
const twinFetch = withTwins((input) => respond(new Request(input), "file", false), gzipTwins);

self.addEventListener("fetch", (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  const fetchedEarly = early.take(request);
  if (fetchedEarly) {
    event.respondWith(fetchedEarly);
    return;
  }
  const navigate = request.mode === "navigate";
  const kind = kindOf(url.pathname, course, navigate);
  const isolate = navigate || ISOLATED.has(request.destination);
  if (twinned.has(url.pathname) && !request.headers.has("range")) {
    event.respondWith(twinFetch(request.url).then(isolate ? withHeaders : (response) => response));
    return;
  }
  // Before the course is cached, the big files (Pyodide, the snapshot) are left to the
  // browser's own fetch instead of being piped through this worker; the core's WebAssembly
  // always is (offline-rules.js: the compiled code stays in the HTTP cache's entry).
  if (!isolate && kind !== "page" && (!complete || keepsCompiledCode(url.pathname))) return;
  event.respondWith(respond(request, kind, isolate));
});

async function broadcast(message) {
  const clients = await self.clients.matchAll({ includeUncontrolled: true, type: "window" });
  for (const client of clients) client.postMessage({ ...message, version: course.version });
}

/** Put `url` in `cache`: a file from an older version's cache if there, else the network. */
async function store(cache, url, page) {
  if (await cache.match(url, LOOKUP)) return;
  let response = page ? undefined : await caches.match(url, LOOKUP);
  if (!response) {
    // A file's URL names its content: the copy the boot just fetched, in the HTTP cache, is the
    // right one even when the host gave it no caching headers (python -m http.server).
    response = await fetch(url, { cache: page ? "no-cache" : "force-cache" });
    if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  }
  await cache.put(url, response);
}

/** False when the host now serves another version's worker (a new export is out). */
async function stillCurrent() {
  try {
    const response = await fetch(self.location.href, { cache: "no-store" });
    return (await response.text()).includes(JSON.stringify(course.version));
  } catch {
    return true; // offline: what was just fetched is this version's
  }
}

async function fill() {
  const cache = await caches.open(CACHE);
  if (!(await cache.match(COMPLETE))) {
    const pages = new Set(course.pages);
    const queue = [...course.pages, ...course.files];
    const total = queue.length;
    let done = 0;
    const next = async () => {
      for (let url = queue.shift(); url; url = queue.shift()) {
        await store(cache, url, pages.has(url));
        done += 1;
        await broadcast({ type: SW_MESSAGES.PROGRESS, done, total });
      }
    };
    await Promise.all([next(), next(), next()]);
    if (!(await stillCurrent())) {
      await caches.delete(CACHE);
      return;
    }
    await cache.put(COMPLETE, new Response(course.version));
  }
  complete = true;
  // An old version's worker, asked by a page just before a new version took over, leaves the
  // caches alone: deleting "the others" would delete the new version's, half filled.
  if (!superseded(self.registration, self.serviceWorker)) {
    for (const name of otherVersions(await caches.keys(), course.version)) await caches.delete(name);
  }
  await broadcast({ type: SW_MESSAGES.READY });
}

let filling = null;

self.addEventListener("message", (event) => {
  // A page tells a waiting worker to take over: skipWaiting again makes the browser activate it
  // as soon as the old worker is idle, should an event for that one have put the swap off.
  if (event.data?.type === SW_MESSAGES.TAKE_OVER) event.waitUntil(self.skipWaiting());
  if (event.data?.type === SW_MESSAGES.EARLY_FILES) {
    // Not when the course is kept offline (a reload that bypassed this worker): the workers
    // read those files from the offline copy, and an early download would go unused.
    const files = event.data.files ?? [];
    const start = (found) => (found.length ? undefined : early.start(files, self.location.href));
    event.waitUntil(completeCaches().then(start));
    return;
  }
  if (event.data?.type !== SW_MESSAGES.CACHE_COURSE) return;
  filling ??= fill()
    .catch((error) => broadcast({ type: SW_MESSAGES.FAILED, message: String(error?.message ?? error) }))
    .finally(() => {
      filling = null;
    });
  event.waitUntil(filling);
});
