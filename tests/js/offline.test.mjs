// offline-rules.js: how the service worker answers each request, and what it adds or deletes.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CLAIM_WAIT_MS,
  cacheName,
  kindOf,
  missingHeaders,
  offlineText,
  otherVersions,
  settledWithin,
  superseded,
} from "../../static/js/shared/offline-rules.js";

const course = {
  pages: ["/course/", "/course/lessons/a/1/"],
  files: ["/course/assets/app-X.js", "/course/packages/numpy.whl"],
};

test("pages go to the network first, files to the cache, the rest to the network", () => {
  assert.equal(kindOf("/course/lessons/a/1/", course), "page");
  assert.equal(kindOf("/course/assets/app-X.js", course), "file");
  assert.equal(kindOf("/course/assets/app-OLD.js", course), "other");
  // Any navigation is a page, listed or not.
  assert.equal(kindOf("/course/lessons/a/9/", course, true), "page");
});

test("only the headers the host did not send are added", () => {
  const sent = new Headers({ "Cross-Origin-Opener-Policy": "same-origin" });
  const wanted = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
  };
  assert.deepEqual(missingHeaders(sent, wanted), [["cross-origin-embedder-policy", "require-corp"]]);
  assert.deepEqual(missingHeaders(new Headers(wanted), wanted), []);
});

test("a complete version deletes every other version's cache and nothing else", () => {
  const names = [cacheName("v1"), cacheName("v2"), "someone-elses-cache"];
  assert.deepEqual(otherVersions(names, "v2"), [cacheName("v1")]);
  assert.deepEqual(otherVersions([cacheName("v2")], "v2"), []);
});

test("a worker that a new version replaces deletes no cache", () => {
  const old = { name: "v1" };
  const next = { name: "v2" };
  assert.equal(superseded({ installing: null, waiting: null, active: old }, old), false);
  assert.equal(superseded({ installing: next, waiting: null, active: old }, old), true);
  assert.equal(superseded({ installing: null, waiting: next, active: old }, old), true);
  assert.equal(superseded({ installing: null, waiting: null, active: next }, old), true);
  // A browser that does not say which worker this is: only an installing or waiting one counts.
  assert.equal(superseded({ installing: null, waiting: null, active: next }, undefined), false);
  assert.equal(superseded({ installing: next, waiting: null, active: old }, undefined), true);
});

test("the offline mark says how far the caching got", () => {
  assert.equal(
    offlineText({ type: "offline-progress", done: 3, total: 20 }),
    "Saving for offline… 3 of 20 files",
  );
  assert.equal(offlineText({ type: "offline-ready" }), "✓ Available offline");
  assert.match(offlineText({ type: "offline-failed", message: "HTTP 404" }), /Not saved.*404/);
  assert.equal(offlineText({ type: "something-else" }), null);
});

/** Whether `promise` has resolved once the microtasks queued so far have run. */
async function resolvedYet(promise) {
  let resolved = false;
  promise.then(() => {
    resolved = true;
  });
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
  return resolved;
}

test("activation waits for a claim that settles, and no longer for one that never does", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  // A claim that settles (either way) ends the wait at once.
  assert.equal(await resolvedYet(settledWithin(Promise.resolve(), CLAIM_WAIT_MS)), true);
  assert.equal(await resolvedYet(settledWithin(Promise.reject(new Error("x")), CLAIM_WAIT_MS)), true);
  // One that never settles holds activation CLAIM_WAIT_MS, then lets it go.
  const never = settledWithin(new Promise(() => {}), CLAIM_WAIT_MS);
  t.mock.timers.tick(CLAIM_WAIT_MS - 1);
  assert.equal(await resolvedYet(never), false);
  t.mock.timers.tick(1);
  assert.equal(await resolvedYet(never), true);
});
