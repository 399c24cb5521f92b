// Build the front end into static/build/:
//   app-<hash>.js, worker-<hash>.js, style-<hash>.css   our ES modules bundled with CodeMirror
//   pyodide/<version>/                                   the Pyodide core, under a versioned path
//   node/boot.mjs                                        boot.js bundled for Pyodide under Node
//   manifest.json                                        logical name -> hashed file, for the server
import { existsSync } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const out = path.join(root, "static", "build");
const require = createRequire(import.meta.url);
const pyodideDir = path.dirname(require.resolve("pyodide/package.json"));
const pyodideVersion = JSON.parse(await readFile(path.join(pyodideDir, "package.json"))).version;
// The core's files, as promptdojo.pyodide.release knows them: the common ones and the loader.
const CORE_FILES = JSON.parse(
  await readFile(path.join(root, "promptdojo", "pyodide", "core_files.json"), "utf8"),
);
const loader = CORE_FILES.loaders.find((name) => existsSync(path.join(pyodideDir, name)));
const PYODIDE_CORE = [...CORE_FILES.common, loader];

async function copyIfChanged(from, to) {
  const [a, b] = await Promise.all([stat(from), stat(to).catch(() => null)]);
  if (b && b.size === a.size && b.mtimeMs >= a.mtimeMs) return false;
  await copyFile(from, to);
  return true;
}

await mkdir(out, { recursive: true });
// Remove stale hashed bundles; the Pyodide folder is kept and updated in place.
for (const name of await readdir(out)) {
  if (name !== "pyodide") await rm(path.join(out, name), { recursive: true, force: true });
}

// zstddec keeps its WebAssembly in a module-level constant and fetches it as a data: URL, which
// the pages' content security policy refuses; zstd-decoder.js instantiates it itself.
const exposeZstdWasm = {
  name: "expose-zstd-wasm",
  setup(build) {
    build.onLoad({ filter: /zstddec[\\/]dist[\\/]zstddec-stream\.mjs$/ }, async (args) => {
      const text = await readFile(args.path, "utf8");
      if (!text.includes('\nconst wasm = "')) {
        throw new Error(`${args.path} no longer holds its wasm constant: update exposeZstdWasm`);
      }
      return { contents: `${text}\nexport { wasm as ZSTD_WASM_BASE64 };\n`, loader: "js" };
    });
  },
};

const result = await esbuild.build({
  plugins: [exposeZstdWasm],
  entryPoints: {
    zstd: path.join(root, "static/js/shared/zstd.js"),
    start: path.join(root, "static/js/page/start.js"),
    app: path.join(root, "static/js/page/app.js"),
    worker: path.join(root, "static/js/kernel/worker.js"),
    "download-worker": path.join(root, "static/js/kernel/download-worker.js"),
    live: path.join(root, "static/js/page/live.js"),
    index: path.join(root, "static/js/page/index.js"),
    sw: path.join(root, "static/js/sw/sw.js"),
    style: path.join(root, "static/css/style.css"),
  },
  outdir: out,
  entryNames: "[name]-[hash]",
  bundle: true,
  format: "esm",
  target: ["es2022"],
  minify: true,
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning",
});

// The boot module for Pyodide under Node (`promptdojo check --pyodide`, the snapshot maker): the
// worker's own boot.js with its imports, as one file the Python package ships.
await esbuild.build({
  entryPoints: [path.join(root, "static/js/kernel/boot.js")],
  outfile: path.join(out, "node", "boot.mjs"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: ["node20"],
  logLevel: "warning",
});

const files = {};
for (const [output, meta] of Object.entries(result.metafile.outputs)) {
  if (!meta.entryPoint) continue;
  const name = path.basename(output);
  const logical = name.replace(/-[A-Z0-9]+\./, ".");
  files[logical] = name;
}

const pyodideOut = path.join(out, "pyodide", pyodideVersion);
await mkdir(pyodideOut, { recursive: true });
for (const name of PYODIDE_CORE) {
  await copyIfChanged(path.join(pyodideDir, name), path.join(pyodideOut, name));
}

// Precompress once at build time (brotli and gzip); the server picks by Accept-Encoding and never
// compresses per request. Zips and wheels are already compressed and are left alone.
const COMPRESSIBLE = /\.(js|mjs|css|wasm|json|map)$/;
async function precompress(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node") await precompress(file);
      continue;
    }
    if (!COMPRESSIBLE.test(entry.name)) continue;
    const source = await stat(file);
    const done = await stat(`${file}.br`).catch(() => null);
    if (done && done.mtimeMs >= source.mtimeMs) continue;
    const data = await readFile(file);
    const br = brotliCompressSync(data, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: data.length > 4e6 ? 9 : 11,
        [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    });
    await writeFile(`${file}.br`, br);
    await writeFile(`${file}.gz`, gzipSync(data, { level: 9 }));
  }
}
await precompress(out);

const manifest = { files, pyodide_version: pyodideVersion };
await writeFile(path.join(out, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`built ${Object.values(files).join(", ")} and pyodide ${pyodideVersion}`);
