// Make a memory snapshot of a booted Pyodide: `node snapshot.mjs JOB`.
//
// JOB: {boot, pyodide, stdlib, bundle, out, packages}. boot.js's `makeSnapshot` boots the core in
// `pyodide` with the standard library `stdlib` (promptdojo.pyodide.stdlib), installs the learner
// bundle, imports the kernel and takes the snapshot; it is written to `out` without its all-zero
// pages (static/js/kernel/snapshot-file.js), with `out.br` and `out.gz` beside it (the server never
// compresses per request). With `packages` ({wheels, folder, imports}: each wheel's lock entry and
// `path`), their libraries are loaded first and `imports` imported, and what a page needs to
// restore them is written to `out.json` (static/js/kernel/snapshot-packages.js).
//
// The same inputs give the same bytes: while the snapshot is made, the clocks and the entropy
// source that the interpreter reads at start-up (hash secret, allocator and `random` seeds, file
// times) are fixed. A restored interpreter reads the real ones again, and boot.js seeds `random`
// afresh after every restore.
import nodeCrypto from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

function fixStartupInputs() {
  process.argv[1] = "promptdojo-snapshot"; // Emscripten's `thisProgram`
  Date.now = () => 315532800000; // 1980-01-01, as in the learner bundle's zip
  let tick = 0;
  performance.now = () => (tick += 0.001);
  let state = 0x9e3779b9; // xorshift32: fixed bytes wherever Emscripten asks for entropy
  const fill = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      bytes[i] = state & 255;
    }
    return view;
  };
  globalThis.crypto.getRandomValues = fill;
  nodeCrypto.randomFillSync = fill;
}

async function main() {
  const job = JSON.parse(await readFile(process.argv[2], "utf8"));
  const core = path.resolve(job.pyodide) + path.sep;
  const bundle = new Uint8Array(await readFile(job.bundle));
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  const boot = await import(pathToFileURL(path.resolve(job.boot)).href);
  fixStartupInputs();
  const packages = job.packages && {
    prepared: boot.prepareWheels(
      job.packages.wheels.map(({ path: file, ...entry }) => ({ ...entry, bytes: readFile(file) })),
    ),
    folder: job.packages.folder,
    imports: job.packages.imports,
  };
  const where = { loadPyodide, indexURL: core, stdLibURL: job.stdlib };
  const made = await boot.makeSnapshot(where, bundle, packages);
  // The file pages fetch: the snapshot without its all-zero pages (static/js/kernel/snapshot-file.js).
  const data = boot.packSnapshot(made.bytes);
  if (made.packages) await writeFile(`${job.out}.json`, JSON.stringify(made.packages));
  const br = brotliCompressSync(data, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 9,
      [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  // Compressed copies first, the snapshot last: its presence means all three are complete.
  await writeFile(`${job.out}.br`, br);
  await writeFile(`${job.out}.gz`, gzipSync(data, { level: 9 }));
  await writeFile(`${job.out}.tmp`, data);
  await rename(`${job.out}.tmp`, job.out);
}

main().catch((error) => {
  console.error(`snapshot.mjs: ${String(error?.stack ?? error)}`);
  process.exit(2);
});
