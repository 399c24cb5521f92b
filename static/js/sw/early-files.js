// The boot's first big files, fetched by the service worker while a first visit's page reloads
// under it.
//
// On a host that sends no isolation headers, a learner's first visit registers the service worker
// and reloads (templates/_isolation.js); the reloaded page's kernel worker then asks for Pyodide's
// WebAssembly and the snapshot. Until then the link carries almost nothing: on a slow link that is
// time the boot, which is bound by its bytes, never gets back. So the first page hands the worker
// the kernel config's `earlyFiles` before it reloads, the worker fetches them at once, and the
// reloaded page's requests for them are answered with those responses: each file still comes
// once. A file a page has already asked for is not fetched again; one no request takes within
// `keepMs` is dropped.
import { EARLY_FILE_KEEP_MS } from "../shared/offline-rules.js";

export function earlyFiles(fetchImpl = (input) => fetch(input), keepMs = EARLY_FILE_KEEP_MS) {
  /** Early responses not yet taken, by URL. */
  const pending = new Map();
  /** Every URL a request has asked for through this worker. */
  const asked = new Set();
  const drop = (href, response) => {
    if (pending.get(href) !== response) return;
    pending.delete(href);
    response.then((r) => r.body?.cancel(), () => {});
  };
  return {
    /**
     * Start fetching `files` (URLs, resolved against `base`, of `base`'s origin) that no request
     * has asked for yet; resolves once each has its response's head, or has failed.
     */
    start(files, base) {
      const { origin } = new URL(base);
      const heads = [];
      for (const file of files) {
        const href = new URL(file, base).href;
        if (new URL(href).origin !== origin || asked.has(href) || pending.has(href)) continue;
        const response = fetchImpl(href);
        pending.set(href, response);
        setTimeout(() => drop(href, response), keepMs);
        heads.push(response.catch(() => null));
      }
      return Promise.all(heads);
    },
    /**
     * The early response for `request`, once, or null (noting that its URL has been asked for).
     * One that failed, or came back with an error status, is fetched again from the network.
     */
    take(request) {
      asked.add(request.url);
      const response = pending.get(request.url);
      if (!response || request.method !== "GET" || request.headers.has("range")) return null;
      pending.delete(request.url);
      return response.then(
        (early) => {
          if (early.ok) return early;
          early.body?.cancel();
          return fetchImpl(request);
        },
        () => fetchImpl(request),
      );
    },
  };
}
