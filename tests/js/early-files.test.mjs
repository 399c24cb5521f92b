// The service worker's early files (static/js/sw/early-files.js), with real Requests and
// Responses and a counting fetch; and the inline script's message to it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { SW_MESSAGES } from "../../static/js/shared/offline-rules.js";
import { earlyFiles } from "../../static/js/sw/early-files.js";

const BASE = "https://course.example/sw.js";
/** Short, so that the timers of files never taken end with the tests. */
const KEEP_MS = 200;

/** A fetch that answers every URL with its own text (or `status`), and counts what it was asked. */
function countingFetch({ status = 200, fail = false } = {}) {
  const asked = [];
  const fetchImpl = async (input) => {
    const url = typeof input === "string" ? input : input.url;
    asked.push(url);
    if (fail && asked.length === 1) throw new TypeError("network error");
    return new Response(`body of ${url}`, { status: asked.length === 1 ? status : 200 });
  };
  return { asked, fetchImpl };
}

test("a file fetched early answers the first request for it, and only the first", async () => {
  const { asked, fetchImpl } = countingFetch();
  const early = earlyFiles(fetchImpl, KEEP_MS);
  await early.start(["/pyodide/pyodide.asm.wasm.zst"], BASE);
  const url = "https://course.example/pyodide/pyodide.asm.wasm.zst";
  const answer = early.take(new Request(url));
  assert.equal(await (await answer).text(), `body of ${url}`);
  assert.equal(early.take(new Request(url)), null); // the next request goes its own way
  assert.deepEqual(asked, [url]);
});

test("a file a page already asked for is not fetched early", async () => {
  const { asked, fetchImpl } = countingFetch();
  const early = earlyFiles(fetchImpl, KEEP_MS);
  assert.equal(early.take(new Request("https://course.example/snapshot/a.bin.zst")), null);
  await early.start(["/snapshot/a.bin.zst", "/snapshot/std.zip.zst"], BASE);
  assert.deepEqual(asked, ["https://course.example/snapshot/std.zip.zst"]);
});

test("another origin's file is never fetched early", async () => {
  const { asked, fetchImpl } = countingFetch();
  await earlyFiles(fetchImpl, KEEP_MS).start(["https://elsewhere.example/x.zst"], BASE);
  assert.deepEqual(asked, []);
});

test("an early fetch that failed or got an error leaves the request to the network", async () => {
  for (const fault of [{ fail: true }, { status: 503 }]) {
    const { asked, fetchImpl } = countingFetch(fault);
    const early = earlyFiles(fetchImpl, KEEP_MS);
    await early.start(["/a.zst"], BASE);
    const response = await early.take(new Request("https://course.example/a.zst"));
    assert.equal(response.status, 200, JSON.stringify(fault));
    assert.deepEqual(asked, ["https://course.example/a.zst", "https://course.example/a.zst"]);
  }
});

test("a range request does not get the whole early file, which waits for the next", async () => {
  const { fetchImpl } = countingFetch();
  const early = earlyFiles(fetchImpl, KEEP_MS);
  await early.start(["/a.zst"], BASE);
  const url = "https://course.example/a.zst";
  assert.equal(early.take(new Request(url, { headers: { range: "bytes=0-9" } })), null);
  assert.notEqual(early.take(new Request(url)), null);
});

test("an early file no request takes in time is dropped, its download cancelled", async () => {
  let cancelled = false;
  const fetchImpl = async () =>
    new Response(new ReadableStream({ cancel: () => void (cancelled = true) }));
  const early = earlyFiles(fetchImpl, 20);
  await early.start(["/a.zst"], BASE);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.ok(cancelled);
  assert.equal(early.take(new Request("https://course.example/a.zst")), null);
});

test("the page's inline script asks with the type the service worker answers", () => {
  const script = readFileSync(new URL("../../templates/_isolation.js", import.meta.url), "utf8");
  assert.match(script, new RegExp(`type: "${SW_MESSAGES.EARLY_FILES}"`));
});
