// zstd's decoder, as its own small module: the workers import it only when they meet a zstd twin
// (twins.js), which only the static export has. Its default export is a promise of the
// `() => TransformStream` factory (zstd-decoder.js). The WebAssembly is zstddec's, which the
// front-end build exposes (scripts/build.mjs).
import { ZSTD_WASM_BASE64 } from "zstddec/stream";
import { zstdStreams } from "./zstd-decoder.js";

export default zstdStreams(ZSTD_WASM_BASE64);
