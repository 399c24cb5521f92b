// offline-rules.js: how the service worker answers each request, and what it adds or deletes.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  cacheName,
  kindOf,
  missingHeaders,
  offlineText,
  otherVersions,
  superseded,
} from "../../static/js/offline-rules.js";

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
