// The memory snapshot's file: Pyodide's snapshot with its all-zero pages left out.
//
// A snapshot is the interpreter's whole WebAssembly memory, and a third to a half of it is pages
// of zeros (memory never used, or freed). Compression shrinks them on the wire, but the browser
// still decodes, moves and hashes every byte, which makes the snapshot's arrival the longest
// step of a restore. The file therefore holds only the pages that are not all zeros:
//
//   "PDSNAP01"  magic (8 bytes)
//   u32 length of the snapshot, u32 page size, u32 number of runs   (little-endian)
//   per run: u32 first page, u32 number of pages
//   the bytes of every run, in order (the last page may be short: the snapshot ends there)

import { checkedBytes } from "../shared/digest.js";

const MAGIC = "PDSNAP01";
const PAGE = 4096;
const HEADER = MAGIC.length + 12;

function isZero(bytes, start, end) {
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** The snapshot `bytes` (Pyodide's `makeMemorySnapshot`) as the file described above. */
export function packSnapshot(bytes) {
  const pages = Math.ceil(bytes.length / PAGE);
  const runs = [];
  for (let page = 0; page < pages; page++) {
    if (isZero(bytes, page * PAGE, Math.min(bytes.length, (page + 1) * PAGE))) continue;
    const last = runs.at(-1);
    if (last && last[0] + last[1] === page) last[1] += 1;
    else runs.push([page, 1]);
  }
  const kept = runs.reduce((sum, [first, count]) => {
    return sum + Math.min(bytes.length, (first + count) * PAGE) - first * PAGE;
  }, 0);
  const out = new Uint8Array(HEADER + runs.length * 8 + kept);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAGIC));
  view.setUint32(8, bytes.length, true);
  view.setUint32(12, PAGE, true);
  view.setUint32(16, runs.length, true);
  let at = HEADER + runs.length * 8;
  runs.forEach(([first, count], i) => {
    view.setUint32(HEADER + i * 8, first, true);
    view.setUint32(HEADER + i * 8 + 4, count, true);
    const run = bytes.subarray(first * PAGE, Math.min(bytes.length, (first + count) * PAGE));
    out.set(run, at);
    at += run.length;
  });
  return out;
}

/** The snapshot a `packSnapshot` file holds; throws "the snapshot is damaged: …" if malformed. */
export function unpackSnapshot(file) {
  const damaged = (why) => new Error(`the snapshot is damaged: ${why}`);
  if (file.length < HEADER || new TextDecoder().decode(file.subarray(0, 8)) !== MAGIC) {
    throw damaged("it is not a promptdojo snapshot file");
  }
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const [length, page, count] = [8, 12, 16].map((offset) => view.getUint32(offset, true));
  if (HEADER + count * 8 > file.length) throw damaged(`its ${count} runs do not fit the file`);
  const bytes = new Uint8Array(length);
  let at = HEADER + count * 8;
  for (let i = 0; i < count; i++) {
    const first = view.getUint32(HEADER + i * 8, true) * page;
    const end = Math.min(length, first + view.getUint32(HEADER + i * 8 + 4, true) * page);
    if (end <= first || at + (end - first) > file.length) throw damaged(`run ${i} is out of range`);
    bytes.set(file.subarray(at, at + (end - first)), first);
    at += end - first;
  }
  if (at !== file.length) throw damaged(`${file.length - at} bytes follow its last run`);
  return bytes;
}

/**
 * The snapshot in the file `bytes` (the format above), if the file's SHA-256 is `sha256` (hex).
 * Where the Web Crypto digest is missing (a page served over plain HTTP from another host), the
 * restore itself is the check.
 */
export async function checkedSnapshot(bytes, sha256) {
  return unpackSnapshot(await checkedBytes(bytes, sha256, "the snapshot"));
}
