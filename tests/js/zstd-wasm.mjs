// zstddec's WebAssembly for the Node tests, read as the front-end build exposes it to the page
// (scripts/build.mjs): the base64 constant of its streaming build.
import { readFile } from "node:fs/promises";

const DIST = new URL("../../node_modules/zstddec/dist/zstddec-stream.mjs", import.meta.url);

/** The base64 of zstddec's streaming WebAssembly. */
export async function zstdWasmBase64() {
  const text = await readFile(DIST, "utf8");
  return text.split('const wasm = "')[1].split('"')[0];
}
