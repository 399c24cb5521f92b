// zstd, decoded as it downloads: a `TransformStream` around the reference decoder's WebAssembly
// build that npm's zstddec ships (its ZSTD_decompressStream), fed chunk by chunk, so that a
// compressed copy of Pyodide's WebAssembly decodes while it arrives and streaming compilation
// still overlaps the download (twins.js). zstddec's own streaming API is a synchronous
// generator over a synchronous list of chunks, which cannot wait for the network.

/** Whether a `size_t` result of the decoder is an error code (ZSTD_isError: the last 120). */
const isError = (code) => code >>> 0 > 0xffffff88;

/**
 * A decoder factory from zstddec's WebAssembly (`base64`): `await zstdStreams(base64)` gives
 * `() => TransformStream` of compressed bytes to decoded bytes. A damaged frame (its checksum,
 * a bad block) or a stream that ends inside a frame errors the stream.
 */
export async function zstdStreams(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  let heap = null;
  let view = null;
  const imports = {
    env: {
      emscripten_notify_memory_growth: () => {
        heap = new Uint8Array(exports.memory.buffer);
        view = new DataView(exports.memory.buffer);
      },
    },
  };
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  const exports = instance.exports;
  imports.env.emscripten_notify_memory_growth();
  const inSize = exports.ZSTD_DStreamInSize();
  const outSize = exports.ZSTD_DStreamOutSize();
  return () => decodingStream(exports, () => ({ heap, view }), inSize, outSize);
}

/** One stream's decoder state in the instance's memory: a context and its buffers. */
function decodingStream(exports, memory, inSize, outSize) {
  let context = 0;
  let input = 0; // ZSTD_inBuffer {src, size, pos}
  let output = 0; // ZSTD_outBuffer {dst, size, pos}
  let source = 0;
  let target = 0;
  let last = 0; // 0 once a frame is complete
  const free = () => {
    if (!context) return;
    exports.ZSTD_freeDCtx(context);
    for (const pointer of [input, output, source, target]) exports.free(pointer);
    context = 0;
  };
  /** Decode `chunk`, giving each decoded piece to `enqueue` (zstd's documented loop). */
  const push = (chunk, enqueue) => {
    for (let offset = 0; offset < chunk.length; offset += inSize) {
      const piece = chunk.subarray(offset, offset + inSize);
      let { heap, view } = memory();
      heap.set(piece, source);
      view.setUint32(input, source, true);
      view.setUint32(input + 4, piece.length, true);
      view.setUint32(input + 8, 0, true);
      let full = false;
      do {
        ({ view } = memory());
        view.setUint32(output, target, true);
        view.setUint32(output + 4, outSize, true);
        view.setUint32(output + 8, 0, true);
        last = exports.ZSTD_decompressStream(context, output, input);
        if (isError(last)) throw new Error("the compressed file is damaged (zstd)");
        ({ heap, view } = memory()); // the call may have grown the memory
        const produced = view.getUint32(output + 8, true);
        if (produced) enqueue(heap.slice(target, target + produced));
        // A full output buffer may leave decoded bytes inside the decoder: ask again.
        full = produced === outSize;
      } while (full || view.getUint32(input + 8, true) < piece.length);
    }
  };
  return new TransformStream({
    start() {
      context = exports.ZSTD_createDCtx();
      input = exports.malloc(12);
      output = exports.malloc(12);
      source = exports.malloc(inSize);
      target = exports.malloc(outSize);
    },
    transform(chunk, controller) {
      try {
        push(chunk, (bytes) => controller.enqueue(bytes));
      } catch (error) {
        free();
        throw error;
      }
    },
    flush() {
      const incomplete = last !== 0;
      free();
      if (incomplete) throw new Error("the compressed file ends early (zstd)");
    },
    cancel: free,
  });
}
