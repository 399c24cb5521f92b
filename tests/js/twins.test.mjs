// The export's compressed twins (static/js/shared/twins.js): fetched and decoded in place of the file,
// passed on when the host decoded them already, and the file itself fetched when a twin fails.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

import { withTwins, zstdLoader } from "../../static/js/shared/twins.js";
import { zstdStreams } from "../../static/js/shared/zstd-decoder.js";
import { zstdWasmBase64 } from "./zstd-wasm.mjs";

const here = new URL(".", import.meta.url);
const raw = new Uint8Array(await readFile(new URL("fixtures/sample.bin", here)));
const zst = new Uint8Array(await readFile(new URL("fixtures/sample.bin.zst", here)));
const zstd = zstdStreams(await zstdWasmBase64());
const BASE = "http://course.test/pyodide/";

/** A host serving `files` (URL -> bytes or a Response maker), counting requests per URL. */
function host(files) {
  const asked = [];
  const fetchImpl = async (input) => {
    const url = String(input?.url ?? input);
    asked.push(url);
    const file = files[url];
    if (typeof file === "function") return file();
    if (!file) return new Response("not found", { status: 404 });
    return new Response(file, { status: 200 });
  };
  return { fetchImpl, asked };
}

function wrapped(files, twins) {
  const { fetchImpl, asked } = host(files);
  const said = [];
  const fetch = withTwins(fetchImpl, twins, {
    loadZstd: () => zstd,
    onFallBack: (message) => said.push(message),
  });
  return { fetch, asked, said };
}

const bytes = async (response) => new Uint8Array(await response.arrayBuffer());

test("a zstd twin and a gzip twin are fetched instead of their files, and decoded", async () => {
  const gz = gzipSync(raw);
  const { fetch, asked, said } = wrapped(
    { [`${BASE}a.wasm.zst`]: zst, [`${BASE}b.js.gz`]: gz },
    { [`${BASE}a.wasm`]: [`${BASE}a.wasm.zst`, "zstd"], [`${BASE}b.js`]: [`${BASE}b.js.gz`, "gzip"] },
  );
  const wasm = await fetch(`${BASE}a.wasm`);
  assert.equal(wasm.headers.get("content-type"), "application/wasm");
  assert.deepEqual(await bytes(wasm), raw);
  const js = await fetch(new Request(`${BASE}b.js`));
  assert.equal(js.headers.get("content-type"), "text/javascript");
  assert.deepEqual(await bytes(js), raw);
  assert.deepEqual(asked, [`${BASE}a.wasm.zst`, `${BASE}b.js.gz`]);
  assert.deepEqual(said, []);
});

test("without DecompressionStream a gzip twin is never fetched: the file comes, said once", async () => {
  const kept = globalThis.DecompressionStream;
  delete globalThis.DecompressionStream;
  try {
    const { fetch, asked, said } = wrapped(
      { [`${BASE}b.js`]: raw, [`${BASE}b.js.gz`]: gzipSync(raw) },
      { [`${BASE}b.js`]: [`${BASE}b.js.gz`, "gzip"] },
    );
    assert.deepEqual(await bytes(await fetch(`${BASE}b.js`)), raw);
    assert.deepEqual(await bytes(await fetch(`${BASE}b.js`)), raw);
    assert.deepEqual(asked, [`${BASE}b.js`, `${BASE}b.js`]);
    assert.equal(said.length, 1);
    assert.match(said[0], /compressed copy of b\.js was not used \(this browser has no Decompr/);
  } finally {
    globalThis.DecompressionStream = kept;
  }
});

test("a twin the host decoded on the way is passed on as it is", async () => {
  const { fetch, said } = wrapped(
    { [`${BASE}a.wasm.zst`]: raw },
    { [`${BASE}a.wasm`]: [`${BASE}a.wasm.zst`, "zstd"] },
  );
  assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), raw);
  assert.deepEqual(said, []);
});

test("a missing twin leaves the request to the file, said once", async () => {
  const { fetch, asked, said } = wrapped(
    { [`${BASE}a.wasm`]: raw },
    { [`${BASE}a.wasm`]: [`${BASE}a.wasm.zst`, "zstd"] },
  );
  assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), raw);
  assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), raw);
  assert.deepEqual(asked, [`${BASE}a.wasm.zst`, `${BASE}a.wasm`, `${BASE}a.wasm`]);
  assert.equal(said.length, 1);
  assert.match(said[0], /compressed copy of a\.wasm was not used \(HTTP 404\)/);
});

test("a damaged or cut twin errors its response; asked again, the file itself comes", async () => {
  const damaged = zst.slice();
  damaged[Math.floor(damaged.length / 2)] ^= 0x5a;
  // The connection drops after two chunks have arrived.
  const cut = () => {
    let pulls = 0;
    return new Response(
      new ReadableStream({
        pull(controller) {
          pulls += 1;
          if (pulls > 2) controller.error(new TypeError("network error"));
          else controller.enqueue(zst.subarray((pulls - 1) * 10_000, pulls * 10_000));
        },
      }),
    );
  };
  for (const twin of [damaged, cut]) {
    const { fetch, said } = wrapped(
      { [`${BASE}a.wasm`]: raw, [`${BASE}a.wasm.zst`]: twin },
      { [`${BASE}a.wasm`]: [`${BASE}a.wasm.zst`, "zstd"] },
    );
    await assert.rejects(bytes(await fetch(`${BASE}a.wasm`)));
    assert.equal(said.length, 1);
    assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), raw);
  }
});

test("other files and requests that ask for more than the file go to the network", async () => {
  const { fetch, asked } = wrapped(
    { [`${BASE}a.wasm`]: raw, [`${BASE}other.zip`]: raw },
    { [`${BASE}a.wasm`]: [`${BASE}a.wasm.zst`, "zstd"] },
  );
  await fetch(`${BASE}other.zip`);
  await fetch(`${BASE}a.wasm`, { headers: { range: "bytes=0-10" } });
  await fetch(`${BASE}a.wasm`, { method: "HEAD" });
  assert.deepEqual(asked, [`${BASE}other.zip`, `${BASE}a.wasm`, `${BASE}a.wasm`]);
});

test("a boot file that arrives compressed without saying so is decoded, and said once", async () => {
  const { fetchImpl, asked } = host({
    [`${BASE}a.wasm`]: zst,
    [`${BASE}lock.json`]: gzipSync(raw),
    [`${BASE}stdlib.zip`]: raw,
    "http://course.test/page": zst,
  });
  const said = [];
  const fetch = withTwins(fetchImpl, {}, {
    sniffed: [BASE],
    loadZstd: () => zstd,
    onFallBack: (message) => said.push(message),
  });
  // WebAssembly goes on as it came the first time (its compile fails), and is decoded when the
  // page asks for it again.
  assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), zst);
  assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), raw);
  assert.deepEqual(await bytes(await fetch(`${BASE}a.wasm`)), raw);
  assert.deepEqual(await bytes(await fetch(`${BASE}lock.json`)), raw);
  assert.deepEqual(await bytes(await fetch(`${BASE}stdlib.zip`)), raw); // nothing to decode
  assert.deepEqual(await bytes(await fetch("http://course.test/page")), zst); // not a boot file
  assert.equal(asked.length, 6);
  assert.deepEqual(said.map((m) => m.match(/: (\S+) came (\w+)/).slice(1)), [
    ["a.wasm", "zstd"],
    ["lock.json", "gzip"],
  ]);
});

test("WebAssembly goes on as the host's own response, unread, the first time", async () => {
  // Streaming compilation keeps its compiled code only for the browser's own response (its URL,
  // its cache entry): a copy made here would compile anew on every visit.
  const own = new Response(raw, { status: 200 });
  const short = new Response(new Uint8Array([0x28, 0xb5]), { status: 200 }); // under 4 bytes
  const other = new Response(raw, { status: 200 });
  const { fetchImpl } = host({
    [`${BASE}a.wasm`]: () => own,
    [`${BASE}b.wasm`]: () => short,
    [`${BASE}stdlib.zip`]: () => other,
  });
  const fetch = withTwins(fetchImpl, {}, { sniffed: [BASE], loadZstd: () => zstd });
  const got = await fetch(`${BASE}a.wasm`);
  assert.equal(got, own);
  assert.equal(got.bodyUsed, false);
  assert.deepEqual(await bytes(got), raw);
  assert.equal(await fetch(`${BASE}b.wasm`), short);
  assert.deepEqual(await bytes(short), new Uint8Array([0x28, 0xb5]));
  // Any other file is read here (see twins.js), and so is WebAssembly asked for again.
  const zip = await fetch(`${BASE}stdlib.zip`);
  assert.notEqual(zip, other);
  assert.deepEqual(await bytes(zip), raw);
  const again = new Response(raw, { status: 200 });
  const { fetchImpl: second } = host({ [`${BASE}a.wasm`]: () => again });
  const twice = withTwins(second, {}, { sniffed: [BASE], loadZstd: () => zstd });
  assert.equal(await twice(`${BASE}a.wasm`), again);
  const reread = await twice(`${BASE}a.wasm`);
  assert.notEqual(reread, again);
  assert.deepEqual(await bytes(reread), raw);
});

test("zstd's decoder is asked for at once where a twin is zstd, and only there", async () => {
  const loads = [];
  const load = async (url) => {
    loads.push(url);
    return { default: "decoder" };
  };
  const zstdTwins = { "pyodide.asm.wasm": ["pyodide.asm.wasm.zst", "zstd"] };
  const loadZstd = zstdLoader({ zstdUrl: "/assets/zstd.js", twins: zstdTwins }, load);
  assert.deepEqual(loads, ["/assets/zstd.js"]); // before any zstd byte has arrived
  assert.equal(await loadZstd(), "decoder");
  assert.equal(await loadZstd(), "decoder");
  assert.deepEqual(loads, ["/assets/zstd.js"]); // one load, shared

  const gzipOnly = { "pyodide.mjs": ["pyodide.mjs.gz", "gzip"] };
  const later = zstdLoader({ zstdUrl: "/assets/zstd.js", twins: gzipOnly }, load);
  zstdLoader({ zstdUrl: "/assets/zstd.js" }, load); // served: no twins
  assert.equal(loads.length, 1);
  assert.equal(await later(), "decoder"); // a zstd body met anyway (sniffed) still decodes
  assert.equal(loads.length, 2);
});

test("a decoder that fails to load early fails the twin that needs it, not the boot", async () => {
  const loadZstd = zstdLoader(
    { zstdUrl: "/assets/zstd.js", twins: { "a.wasm": ["a.wasm.zst", "zstd"] } },
    async () => {
      throw new Error("offline");
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 0)); // no unhandled rejection meanwhile
  await assert.rejects(loadZstd(), /offline/);
});
