// Boot Pyodide under Node with the browser worker's own boot.js: shared by run.mjs and check.mjs.
//
// The job names every path: "boot" (boot.js), "pyodide" (the core folder), "packageDir" (cached
// package wheels), "packages" (to load) and "bundle" (the learner bundle zip).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

export async function bootInNode(job, onStream = () => {}) {
  const core = path.resolve(job.pyodide) + path.sep;
  const cache = path.resolve(job.packageDir ?? ".") + path.sep;
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  const { bootCellRunner } = await import(pathToFileURL(path.resolve(job.boot)).href);
  return bootCellRunner({
    loadPyodide,
    indexURL: core,
    // Packages come from the cache folder only: as base URL it also replaces the CDN fallback.
    packageBaseUrl: cache,
    packages: job.packages ?? [],
    bundle: new Uint8Array(await readFile(job.bundle)),
    onStream,
    pyodideOptions: { packageCacheDir: cache },
  });
}
