// offline-copy.js: which requests of the boot's workers the course's offline copy answers. Node
// has no Cache Storage: a small one stands in here; the e2e test of a return visit
// (tests/e2e/test_offline_serve.py) runs the real one in Chromium.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { offlineCopy, withOfflineCopy } from "../../static/js/offline-copy.js";
import { cacheName } from "../../static/js/offline-rules.js";

const ORIGIN = "https://course.example";
const SNAPSHOT = `${ORIGIN}/course/snapshot/snapshot-ab12.bin`;
const LOCK = `${ORIGIN}/course/pyodide/0.29.0/pyodide-lock.json`;

/** Cache Storage holding `caches` (name -> {url: body}); counts the lookups it answers. */
function cacheStorage(caches, { failing = false } = {}) {
  const storage = {
    lookups: 0,
    async keys() {
      if (failing) throw new DOMException("storage is unavailable", "SecurityError");
      return Object.keys(caches);
    },
    async match(url, { cacheName: name }) {
      storage.lookups += 1;
      const body = caches[name]?.[url];
      return body === undefined ? undefined : new Response(body);
    },
  };
  return storage;
}

beforeEach(() => {
  globalThis.location = new URL(`${ORIGIN}/course/lessons/a/1/`);
  globalThis.caches = cacheStorage({
    "someone-else": { [LOCK]: "theirs" },
    [cacheName("v2")]: { [SNAPSHOT]: "snapshot bytes" },
    [cacheName("v1")]: { [LOCK]: "ours" },
  });
});

afterEach(() => {
  delete globalThis.location;
  delete globalThis.caches;
});

test("a same-origin GET is answered from our caches, relative URLs and Requests too", async () => {
  const text = async (input, init) => (await offlineCopy(input, init)).text();
  assert.equal(await text("../../../snapshot/snapshot-ab12.bin"), "snapshot bytes");
  assert.equal(await text(new Request(LOCK)), "ours"); // not someone else's
  assert.equal(await text(new URL(LOCK), { credentials: "same-origin" }), "ours");
  assert.equal(await offlineCopy(`${ORIGIN}/course/not-cached.js`), undefined);
});

test("other methods, integrity, other origins, unreadable storage: the network", async () => {
  const storage = globalThis.caches;
  assert.equal(await offlineCopy(SNAPSHOT, { method: "POST" }), undefined);
  assert.equal(await offlineCopy(new Request(SNAPSHOT, { method: "HEAD" })), undefined);
  assert.equal(await offlineCopy(SNAPSHOT, { integrity: "sha256-AAAA" }), undefined);
  assert.equal(await offlineCopy("https://cdn.example/course/snapshot/x.bin"), undefined);
  assert.equal(storage.lookups, 0);
  globalThis.caches = cacheStorage({}, { failing: true });
  assert.equal(await offlineCopy(SNAPSHOT), undefined);
  delete globalThis.caches; // Node, or a page over plain HTTP from another host
  assert.equal(await offlineCopy(SNAPSHOT), undefined);
});

test("withOfflineCopy fetches only what the copy does not hold, with its arguments", async () => {
  const calls = [];
  const fetched = withOfflineCopy(async (...args) => {
    calls.push(args);
    return new Response("network");
  });
  assert.equal(await (await fetched(SNAPSHOT)).text(), "snapshot bytes");
  assert.deepEqual(calls, []);
  const init = { integrity: "sha256-AAAA" };
  assert.equal(await (await fetched(SNAPSHOT, init)).text(), "network");
  assert.equal(await (await fetched(`${ORIGIN}/course/other.js`)).text(), "network");
  assert.deepEqual(calls, [
    [SNAPSHOT, init],
    [`${ORIGIN}/course/other.js`, undefined],
  ]);
});
