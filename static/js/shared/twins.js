// The static export's compressed copies ("twins"), decoded by the page itself.
//
// Most static hosts send a binary file as it is: `python -m http.server` compresses nothing,
// others skip `application/wasm` or `application/octet-stream`, CloudFront skips files over
// 10 MB. So the export puts a compressed twin beside each big file (`pyodide.asm.wasm.zst`,
// `pyodide.asm.js.gz`; promptdojo.web.twins), and the kernel config and the service worker's
// course list name them. Asked for the file, the wrapper below fetches its twin and decodes it
// as it arrives: gzip with the browser's `DecompressionStream`, zstd with zstd-decoder.js. The
// result is a plain response for the file, so streaming compilation still overlaps the download.
//
// Nothing is lost on a bad link or host: a twin the host answers with an error, or that cannot
// be fetched, leaves the request to the file itself; a twin the host decoded on the way (sent
// with `Content-Encoding`, as some hosts do for `.gz`) does not start with its format's magic
// number and is passed on as it is; a twin that turns out damaged or cut short errors its
// response (a caller asking again gets the file itself). Each is said once, through `onFallBack`.
//
// The boot's other files (`sniffed`) are looked at too: a proxy or host that drops the
// `Content-Encoding` header of a compressed response hands over zstd or gzip bytes as the file
// itself, which no boot file starts with (WebAssembly, zip archives, the snapshot, JSON). Those
// are decoded here, and said once. WebAssembly is not looked at the first time it is asked for:
// it goes on as the browser's own response, unread, so that streaming compilation keeps its
// compiled code in the cache entry behind it and a later visit reads it back. If it came
// compressed, compiling it fails, and the page asks for it once more (worker.js): that answer is
// looked at, and decoded. (A look at a copy made with `clone` would leave the response unread
// too, but Firefox 140 stopped a large body for good once its copy was cancelled.)
// (Brotli has no magic number: a dropped header on a brotli response cannot be seen, and the
// boot falls back as after any damaged download.)

import { keepsCompiledCode } from "./offline-rules.js";

/** The first bytes of each format (RFC 8878 and RFC 1952). */
export const MAGIC = { zstd: [0x28, 0xb5, 0x2f, 0xfd], gzip: [0x1f, 0x8b] };
/** The content type of a file the page asks for, by suffix (browsers check the first two). */
const TYPES = {
  ".wasm": "application/wasm",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".json": "application/json",
  ".css": "text/css",
};

/** The content type to give the decoded response for `url`. */
export function contentType(url) {
  const path = new URL(url, "http://x/").pathname;
  const suffix = path.slice(path.lastIndexOf("."));
  return TYPES[suffix] ?? "application/octet-stream";
}

/**
 * Why this browser cannot decode `coding` (no `DecompressionStream` for gzip), or null: its
 * twins are then never fetched, and the files come as they are.
 */
export function cannotDecode(coding, scope = globalThis) {
  if (coding === "gzip" && typeof scope.DecompressionStream !== "function") {
    return "this browser has no DecompressionStream";
  }
  return null;
}

/** A decoder for `coding`: the browser's for gzip; zstd from `loadZstd` (zstd-decoder.js). */
export async function decoderFor(coding, loadZstd) {
  if (coding === "gzip") return new DecompressionStream("gzip");
  if (coding === "zstd") return (await loadZstd())();
  throw new Error(`no decoder for ${coding}`);
}

/**
 * `loadZstd` for `withTwins`, from the kernel `config`: where a twin is zstd, the decoder module
 * (`config.zstdUrl`) is asked for at once, beside the boot's first downloads, rather than once
 * the first zstd bytes have arrived (a round trip later, behind the downloads already queued).
 * @param {import("../shared/contract.js").KernelConfig} config
 */
export function zstdLoader(config, load = (url) => import(url)) {
  const load$ = () => load(config.zstdUrl).then((module) => module.default);
  const wanted = Object.values(config.twins ?? {}).some(([, coding]) => coding === "zstd");
  const early = wanted && config.zstdUrl ? load$() : null;
  early?.catch(() => {}); // a twin that needs it reports the failure, and falls back
  return () => early ?? load$();
}

function startsWith(head, magic) {
  return magic.every((byte, i) => head[i] === byte);
}

/** The format whose magic number `head` starts with, of `codings`; else null. */
function formatOf(head, codings) {
  return codings.find((coding) => startsWith(head, MAGIC[coding])) ?? null;
}

/** The first four bytes `reader` gives (fewer if its stream ends first), as one array. */
async function firstBytes(reader) {
  let head = new Uint8Array(0);
  while (head.length < 4) {
    const { value, done } = await reader.read();
    if (done) break;
    const joined = new Uint8Array(head.length + value.length);
    joined.set(head);
    joined.set(value, head.length);
    head = joined;
  }
  return head;
}

/**
 * `body` (a twin's stream) decoded from `coding` (`makeDecoder(coding)` gives a
 * TransformStream), or passed on as it is when its first bytes are not that format's (the host
 * decoded it on the way); `coding` null: from whichever format its first bytes name, if any.
 * Resolves to `{stream, decoded}` once the first bytes are in (`decoded`: the format, or null).
 */
export async function decodedBody(body, coding, makeDecoder) {
  const reader = body.getReader();
  const head = await firstBytes(reader);
  const stream = new ReadableStream({
    start(controller) {
      if (head.length) controller.enqueue(head);
    },
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  const found = formatOf(head, coding ? [coding] : Object.keys(MAGIC));
  return { stream: found ? stream.pipeThrough(await makeDecoder(found)) : stream, decoded: found };
}

/** `stream`, passed on; `onError(why)` is called if it errors (and it still errors). */
function guard(stream, onError) {
  const reader = stream.getReader();
  return new ReadableStream({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        onError(String(error?.message ?? error));
        controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Whether a request asks for nothing but the file (the twin holds nothing else). */
function plainRequest(input, init) {
  const request = typeof Request === "function" && input instanceof Request ? input : null;
  const method = (init?.method ?? request?.method ?? "GET").toUpperCase();
  const headers = new Headers(init?.headers ?? request?.headers);
  return method === "GET" && !headers.has("range") && !(init?.integrity ?? request?.integrity);
}

/**
 * `fetchImpl`, with each file of `twins` (`{url: [twinUrl, coding]}`, URLs relative to the
 * worker or absolute) fetched through its twin and decoded, and each file of `sniffed` (URLs; one
 * ending in "/" covers what is under it) decoded when it arrives compressed without saying so.
 * `loadZstd()` gives zstd's decoder factory (loaded only when zstd bytes are met);
 * `onFallBack(message)` hears, once per file, what was done instead of the usual.
 */
export function withTwins(
  fetchImpl,
  twins,
  { sniffed = [], loadZstd, onFallBack = console.warn } = {},
) {
  const base = globalThis.location?.href ?? "http://localhost/";
  const table = new Map(
    Object.entries(twins ?? {}).map(([url, [twin, coding]]) => [
      new URL(url, base).href,
      { twin: new URL(twin, base).href, coding },
    ]),
  );
  const watched = sniffed.map((url) => new URL(url, base).href);
  const covered = (href) => watched.some((u) => (u.endsWith("/") ? href.startsWith(u) : href === u));
  if (!table.size && !watched.length) return fetchImpl;
  const failed = new Set();
  const said = new Set();
  const fallBack = (href, why) => {
    if (failed.has(href)) return;
    failed.add(href);
    const name = href.slice(href.lastIndexOf("/") + 1);
    onFallBack(`promptdojo: the compressed copy of ${name} was not used (${why}); fetching ${name} itself`);
  };
  const makeDecoder = (coding) => decoderFor(coding, loadZstd);
  /** WebAssembly handed on as the browser's own response, unread: once per file (see above). */
  const handedOn = new Set();
  /** The file itself; decoded if it came compressed without a Content-Encoding header. */
  const plain = async (href, input, init) => {
    const response = await fetchImpl(input, init);
    if (!covered(href) || !response.ok || !response.body) return response;
    if (keepsCompiledCode(new URL(href).pathname) && !handedOn.has(href)) {
      handedOn.add(href); // compiling it fails if it came compressed: asked again, it is looked at
      return response;
    }
    const { stream, decoded } = await decodedBody(response.body, null, makeDecoder);
    if (decoded && !said.has(href)) {
      said.add(href);
      const name = href.slice(href.lastIndexOf("/") + 1);
      onFallBack(`promptdojo: ${name} came ${decoded}-compressed without saying so; decoded here`);
    }
    const { status, statusText, headers } = response;
    return new Response(stream, { status, statusText, headers });
  };
  return async (input, init) => {
    const href = new URL(String(input?.url ?? input), base).href;
    if (!plainRequest(input, init)) return fetchImpl(input, init);
    const entry = table.get(href);
    if (!entry || failed.has(href)) return plain(href, input, init);
    const missing = cannotDecode(entry.coding);
    if (missing) {
      fallBack(href, missing);
      return plain(href, input, init);
    }
    try {
      const response = await fetchImpl(entry.twin, { signal: init?.signal });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const { stream } = await decodedBody(response.body, entry.coding, makeDecoder);
      return new Response(
        guard(stream, (why) => fallBack(href, why)),
        { status: 200, headers: { "content-type": contentType(href) } },
      );
    } catch (error) {
      if (error?.name === "AbortError") throw error;
      fallBack(href, String(error?.message ?? error));
      return plain(href, input, init);
    }
  };
}
