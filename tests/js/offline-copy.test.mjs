// offline-copy.js: which requests of the boot's workers the course's offline copy answers. Node
// has no Cache Storage: a small one stands in here; the e2e test of a return visit
// (tests/e2e/test_offline_serve.py) runs the real one in Chromium.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { offlineCopy, unchangingFiles, withOfflineCopy } from "../../static/js/kernel/offline-copy.js";
import { cacheName } from "../../static/js/shared/offline-rules.js";

const ORIGIN = "https://course.example";
const SNAPSHOT = `${ORIGIN}/course/snapshot/snapshot-ab12.bin`;
const LOCK = `${ORIGIN}/course/pyodide/0.29.0/pyodide-lock.json`;
const PAGE = `${ORIGIN}/course/lessons/a/2`;
const WASM = `${ORIGIN}/course/pyodide/0.29.0/pyodide.asm.wasm`;
const WHEEL = `${ORIGIN}/course/packages/numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl`;
/** A step page's kernel config, as the server writes it: root-relative URLs. */
const CONFIG = {
  pyodideUrl: "/course/pyodide/0.29.0/",
  bundleUrl: "/course/bundle/promptdojo-1a2b.zip",
  snapshot: { url: "/course/snapshot/snapshot-ab12.bin", sha256: "ab12" },
  wheels: [{ url: "/course/packages/numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl" }],
  packagesUrl: "/course/packages/",
};
const FILES = unchangingFiles(CONFIG);

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
    [cacheName("v2")]: { [SNAPSHOT]: "snapshot bytes", [WHEEL]: "wheel bytes", [WASM]: "copy" },
    [cacheName("v1")]: { [LOCK]: "ours", [PAGE]: "an old page" },
  });
});

afterEach(() => {
  delete globalThis.location;
  delete globalThis.caches;
});

test("the boot's files are the config's Pyodide folder, bundle, snapshot and wheels", () => {
  assert.deepEqual(FILES, [
    CONFIG.pyodideUrl,
    CONFIG.bundleUrl,
    CONFIG.snapshot.url,
    CONFIG.wheels[0].url,
  ]);
  // No snapshot (serve --no-snapshot), no wheels: Pyodide's folder and the bundle only.
  const bare = { pyodideUrl: "/p/", bundleUrl: "/b.zip", snapshot: null };
  assert.deepEqual(unchangingFiles(bare), ["/p/", "/b.zip"]);
});

test("a boot file is answered from our caches, relative URLs and Requests too", async () => {
  const text = async (input, init) => (await offlineCopy(input, init, FILES)).text();
  assert.equal(await text("../../../snapshot/snapshot-ab12.bin"), "snapshot bytes");
  assert.equal(await text(new Request(LOCK)), "ours"); // not someone else's
  assert.equal(await text(new URL(LOCK), { credentials: "same-origin" }), "ours");
  assert.equal(await text(WHEEL), "wheel bytes");
  assert.equal(await offlineCopy(`${ORIGIN}/course/pyodide/0.29.0/other.js`, {}, FILES), undefined);
});

test("anything but a boot file goes to the network, even when a cache holds it", async () => {
  const storage = globalThis.caches;
  assert.equal(await offlineCopy(PAGE, undefined, FILES), undefined); // an old version's page
  const otherRelease = `${ORIGIN}/course/pyodide/0.28.0/pyodide-lock.json`;
  assert.equal(await offlineCopy(otherRelease, {}, FILES), undefined);
  assert.equal(await offlineCopy(SNAPSHOT, undefined, []), undefined);
  assert.equal(storage.lookups, 0);
});

test("other methods, integrity, cache, range, signal, origin, no storage: the network", async () => {
  const storage = globalThis.caches;
  const asked = [
    [SNAPSHOT, { method: "POST" }],
    [new Request(SNAPSHOT, { method: "HEAD" })],
    [SNAPSHOT, { integrity: "sha256-AAAA" }],
    [SNAPSHOT, { cache: "no-store" }],
    [new Request(SNAPSHOT, { cache: "reload" })],
    [SNAPSHOT, { headers: { Range: "bytes=0-99" } }],
    [new Request(SNAPSHOT, { headers: { range: "bytes=0-99" } })],
    [SNAPSHOT, { signal: new AbortController().signal }],
    ["https://cdn.example/course/snapshot/snapshot-ab12.bin"],
  ];
  for (const [input, init] of asked) {
    assert.equal(await offlineCopy(input, init, [...FILES, "https://cdn.example/"]), undefined);
  }
  assert.equal(storage.lookups, 0);
  globalThis.caches = cacheStorage({}, { failing: true });
  assert.equal(await offlineCopy(SNAPSHOT, undefined, FILES), undefined);
  delete globalThis.caches; // Node, or a page over plain HTTP from another host
  assert.equal(await offlineCopy(SNAPSHOT, undefined, FILES), undefined);
});

test("withOfflineCopy fetches only what the copy does not hold, with its arguments", async () => {
  const calls = [];
  const fetched = withOfflineCopy(async (...args) => {
    calls.push(args);
    return new Response("network");
  }, FILES);
  assert.equal(await (await fetched(SNAPSHOT)).text(), "snapshot bytes");
  assert.deepEqual(calls, []);
  const init = { integrity: "sha256-AAAA" };
  assert.equal(await (await fetched(SNAPSHOT, init)).text(), "network");
  assert.equal(await (await fetched(PAGE)).text(), "network");
  assert.deepEqual(calls, [
    [SNAPSHOT, init],
    [PAGE, undefined],
  ]);
});

test("the core's WebAssembly: the HTTP cache alone first, then the copy, then the network", async () => {
  const asked = [];
  const answers = [];
  const fetched = withOfflineCopy(async (input, init) => {
    asked.push(init?.cache === "only-if-cached" ? `${init.mode} ${init.cache}` : "network");
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    return answer;
  }, FILES);
  // The HTTP cache's response carries the compiled code: the copy is not read.
  answers.push(new Response("http cache"));
  assert.equal(await (await fetched(WASM)).text(), "http cache");
  assert.deepEqual(asked.splice(0), ["same-origin only-if-cached"]);
  assert.equal(globalThis.caches.lookups, 0);
  // Not in the HTTP cache (a TypeError, or an error answer whose body is dropped): the copy,
  // with the network not asked at all (offline, a host that is down, a portal).
  answers.push(new TypeError("not cached"));
  assert.equal(await (await fetched(WASM)).text(), "copy");
  const refused = new Response("gateway timeout", { status: 504 });
  answers.push(refused);
  assert.equal(await (await fetched(WASM)).text(), "copy");
  assert.equal(refused.bodyUsed || refused.body.locked, true);
  assert.deepEqual(asked.splice(0), ["same-origin only-if-cached", "same-origin only-if-cached"]);
  // Neither (a first visit): the network.
  globalThis.caches = cacheStorage({});
  answers.push(new TypeError("not cached"), new Response("network"));
  assert.equal(await (await fetched(WASM)).text(), "network");
  assert.deepEqual(asked.splice(0), ["same-origin only-if-cached", "network"]);
  // A request that asks for something particular goes to the network as it is.
  answers.push(new Response("network"));
  const signal = new AbortController().signal;
  assert.equal(await (await fetched(WASM, { signal })).text(), "network");
  assert.deepEqual(asked.splice(0), ["network"]);
});
