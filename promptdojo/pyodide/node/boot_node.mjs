// Boot Pyodide under Node with the browser worker's own boot.js: shared by run.mjs and check.mjs.
//
// The job names every path: "boot" (boot.js), "pyodide" (the core folder), "packageDir" (cached
// package wheels), "packages" (to load), "packageWheels" (their wheels in install order:
// {name, file_name, sha256, install_dir, path}), "bundle" (the learner bundle zip) and, optionally,
// "snapshot" {path, sha256, stdlib, packages}: a memory snapshot to restore, the standard library
// it was made with, and the record of the packages it holds, if any (promptdojo.pyodide.snapshot).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

export async function bootInNode(job, onStream = () => {}, onPhase = () => {}) {
  const core = path.resolve(job.pyodide) + path.sep;
  const cache = path.resolve(job.packageDir ?? ".") + path.sep;
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  const { bootCellRunner, checkedSnapshot } = await import(
    pathToFileURL(path.resolve(job.boot)).href
  );
  const snapshot = job.snapshot
    ? readFile(job.snapshot.path).then((bytes) => checkedSnapshot(bytes, job.snapshot.sha256))
    : undefined;
  snapshot?.catch(() => {}); // reported by the boot, which falls back
  return bootCellRunner({
    loadPyodide,
    indexURL: core,
    // Packages come from the cache folder only: as base URL it also replaces the CDN fallback.
    packageBaseUrl: cache,
    packages: job.packages ?? [],
    // The lesson's wheels from the cache folder, unpacked while the interpreter starts.
    wheels: (job.packageWheels ?? []).map(({ path: file, ...wheel }) => {
      const bytes = readFile(file);
      bytes.catch(() => {}); // reported by the boot, which installs through Pyodide instead
      return { ...wheel, bytes };
    }),
    bundle: new Uint8Array(await readFile(job.bundle)),
    snapshot,
    snapshotPackages: job.snapshot?.packages ?? null,
    onStream,
    onPhase,
    pyodideOptions: {
      packageCacheDir: cache,
      // A snapshot restores against the standard library it was made with, as on a page.
      ...(job.snapshot?.stdlib ? { stdLibURL: path.resolve(job.snapshot.stdlib) } : {}),
    },
  });
}
