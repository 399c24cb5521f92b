// The zstd decoding stream (static/js/shared/zstd-decoder.js) on zstddec's own WebAssembly, against a
// copy made as the export makes its copies (promptdojo.pyodide.compressed, checksum included).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";

import { zstdStreams } from "../../static/js/shared/zstd-decoder.js";
import { zstdWasmBase64 } from "./zstd-wasm.mjs";

const here = new URL(".", import.meta.url);
const raw = new Uint8Array(await readFile(new URL("fixtures/sample.bin", here)));
const zst = new Uint8Array(await readFile(new URL("fixtures/sample.bin.zst", here)));
const streams = await zstdStreams(await zstdWasmBase64());

/** Decode `chunks` through one stream; returns the bytes. */
async function decode(chunks) {
  const body = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  return new Uint8Array(await new Response(body.pipeThrough(streams())).arrayBuffer());
}

/** `bytes` cut at `sizes`, cycling. */
function cut(bytes, sizes) {
  const chunks = [];
  for (let at = 0, i = 0; at < bytes.length; i += 1) {
    const size = sizes[i % sizes.length];
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

test("a copy decodes to the file, however the network cuts it", async () => {
  assert.ok(raw.length > 200_000 && zst.length < raw.length / 2); // more than one output buffer
  for (const sizes of [[zst.length], [1], [7, 4096, 3], [65536], [100_000, 1]]) {
    const chunks = sizes[0] === 1 ? cut(zst, [1013, 1, 17]) : cut(zst, sizes);
    assert.deepEqual(await decode(chunks), raw, `cut at ${sizes}`);
  }
});

test("streams decode side by side without mixing", async () => {
  const [a, b] = await Promise.all([decode(cut(zst, [999])), decode(cut(zst, [12345]))]);
  assert.deepEqual(a, raw);
  assert.deepEqual(b, raw);
});

test("a damaged copy errors the stream instead of giving wrong bytes", async () => {
  for (const at of [20, Math.floor(zst.length / 2), zst.length - 2]) {
    const damaged = zst.slice();
    damaged[at] ^= 0x5a;
    await assert.rejects(decode(cut(damaged, [4096])), /damaged|ends early/, `byte ${at}`);
  }
});

test("a copy cut short errors the stream", async () => {
  await assert.rejects(decode([zst.subarray(0, zst.length - 100)]), /ends early/);
  await assert.rejects(decode([zst.subarray(0, 3)]), /ends early|damaged/);
});
