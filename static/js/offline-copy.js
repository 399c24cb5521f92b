// The course's offline copy (sw.js), read straight from Cache Storage by the workers that boot
// Python.
//
// On a visit after the course was saved for offline use, the service worker answers every file
// from its cache. Asked through the service worker, each file also crosses the service worker's
// thread on its way from the cache to the worker that asked: the snapshot, the core's wasm and
// the wheels (tens of megabytes) take that detour while both cores are busy starting Python.
// Read from Cache Storage here, they come straight to the worker. The rule is the service
// worker's own for files (content hashed or versioned, so any cached copy is the right one):
// a same-origin GET that one of our caches holds is answered from it; anything else, or a cache
// that cannot be read, goes to `fetch` as before.
import { CACHE_PREFIX } from "./offline-rules.js";

/** Whether a request may be answered from the offline copy: a plain GET, no integrity asked. */
function plainGet(input, init) {
  const request = typeof Request === "function" && input instanceof Request ? input : null;
  const method = init?.method ?? request?.method ?? "GET";
  const integrity = init?.integrity ?? request?.integrity ?? "";
  return method.toUpperCase() === "GET" && !integrity;
}

/** The offline copy's response for `input` (a URL or Request), or undefined. */
export async function offlineCopy(input, init) {
  const storage = globalThis.caches;
  if (!storage || !globalThis.location || !plainGet(input, init)) return undefined;
  const url = new URL(String(input?.url ?? input), globalThis.location.href);
  if (url.origin !== globalThis.location.origin) return undefined;
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

/** `fetchImpl`, answered from the offline copy where that holds the file. */
export function withOfflineCopy(fetchImpl) {
  return async (input, init) => (await offlineCopy(input, init)) ?? fetchImpl(input, init);
}
