// The course's offline copy (sw.js), read straight from Cache Storage by the workers that boot
// Python.
//
// On a visit after the course was saved for offline use, the service worker answers every file
// from its cache. Asked through the service worker, each file also crosses the service worker's
// thread on its way from the cache to the worker that asked: the snapshot, the standard library
// and the wheels (tens of megabytes) take that detour while both cores are busy starting Python.
// Read from Cache Storage here, they come straight to the worker.
//
// Only the boot's own files are read this way, the ones whose URL names their content: Pyodide's
// release folder (versioned), the learner bundle and the snapshot (content hashed), and the
// lesson's wheels and their compiled archives (checked against their SHA-256 once fetched). For
// those, any cached copy is the right one. Every other request (a page, whatever a learner's
// cell fetches), one that asks for something particular (another method, an integrity, a cache
// mode, a range, a signal), a miss, or a cache that cannot be read goes to `fetch` as before:
// the service worker applies its own rules. The core's WebAssembly is asked of the HTTP cache
// first, which keeps its compiled code (offline-rules.js: `keepsCompiledCode`); the copy answers
// it where the HTTP cache has none.
import { CACHE_PREFIX, keepsCompiledCode } from "../shared/offline-rules.js";

/**
 * The URLs of the kernel `config` that the offline copy may answer: a URL ending in "/" covers
 * everything under it.
 * @param {import("../shared/contract.js").KernelConfig} config
 */
export function unchangingFiles(config) {
  const urls = [config.pyodideUrl, config.bundleUrl, config.snapshot?.url, config.snapshot?.stdlib];
  for (const wheel of config.wheels ?? []) urls.push(wheel.url, wheel.compiled?.url);
  for (const [twin] of Object.values(config.twins ?? {})) urls.push(twin); // twins.js
  return urls.filter(Boolean);
}

/** Whether a request asks for nothing but the file: a GET with no options that change that. */
function plainGet(input, init) {
  const request = typeof Request === "function" && input instanceof Request ? input : null;
  const method = init?.method ?? request?.method ?? "GET";
  const integrity = init?.integrity ?? request?.integrity ?? "";
  const cache = init?.cache ?? request?.cache ?? "default";
  const headers = new Headers(init?.headers ?? request?.headers);
  return (
    method.toUpperCase() === "GET" &&
    !integrity &&
    cache === "default" &&
    !headers.has("range") &&
    !init?.signal
  );
}

/** Whether `href` (absolute) is one of `files` (absolute), or under one that ends in "/". */
function covered(href, files) {
  return files.some((file) => (file.endsWith("/") ? href.startsWith(file) : href === file));
}

/** The URL `input` (a URL or Request) asks for, relative to the worker's location. */
function requestUrl(input) {
  return new URL(String(input?.url ?? input), globalThis.location?.href ?? "http://localhost/");
}

/**
 * The offline copy's response for `input` (a URL or Request), or undefined. `files`: the URLs it
 * may answer (`unchangingFiles`), relative to the worker's location or absolute.
 */
export async function offlineCopy(input, init, files) {
  const storage = globalThis.caches;
  if (!storage || !globalThis.location || !plainGet(input, init)) return undefined;
  const base = globalThis.location.href;
  const url = requestUrl(input);
  if (url.origin !== globalThis.location.origin) return undefined;
  if (!covered(url.href, files.map((file) => new URL(file, base).href))) return undefined;
  try {
    for (const cacheName of await storage.keys()) {
      if (!cacheName.startsWith(CACHE_PREFIX)) continue;
      const hit = await storage.match(url.href, { cacheName, ignoreVary: true });
      if (hit) return hit;
    }
  } catch {
    // Storage that cannot be read (a private window, a full disk): the network answers.
  }
  return undefined;
}

/** Drop `response`'s body, unread (one not used frees its connection and memory sooner). */
function dropped(response) {
  response?.body?.cancel().catch(() => {});
  return undefined;
}

/**
 * A file the browser keeps compiled code for (`keepsCompiledCode`): from the HTTP cache alone
 * (`only-if-cached`: that response carries the code; stale or not, the URL names its content),
 * else from the offline copy, else from the network. So a return visit reads the compiled code
 * back, and neither a network that is down nor a portal that answers in its place holds it up.
 */
async function compiledFirst(fetchImpl, input, init, files) {
  if (plainGet(input, init)) {
    const cached = await fetchImpl(input, { ...init, cache: "only-if-cached", mode: "same-origin" })
      .then((response) => (response.ok ? response : dropped(response)))
      .catch(() => undefined); // not in the HTTP cache, or a browser without the mode
    if (cached) return cached;
  }
  return (await offlineCopy(input, init, files)) ?? fetchImpl(input, init);
}

/**
 * `fetchImpl`, answered from the offline copy where that holds one of `files`, but for a file the
 * browser keeps compiled code for, which the HTTP cache answers first (`compiledFirst`).
 */
export function withOfflineCopy(fetchImpl, files) {
  return async (input, init) => {
    if (keepsCompiledCode(requestUrl(input).pathname)) {
      return compiledFirst(fetchImpl, input, init, files);
    }
    return (await offlineCopy(input, init, files)) ?? fetchImpl(input, init);
  };
}
