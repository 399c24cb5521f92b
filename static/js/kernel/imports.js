// What the page's cells import, imported before "ready" (the kernel config lists it per step,
// promptdojo.course.imports), so that no learner's first Run pays for it: the packages' modules
// first, then the learner library's, whose bundle comes last (download-order.js).
import { inLibrary, writeLibrary } from "./library.js";

/**
 * A `CellRunner` (from `newRunner()`) with `imports` imported: the packages' modules
 * first (numpy), then, after a restore, the learner bundle's files written (`library`, a promise
 * of it; it comes last, download-order.js), then the library's own modules. Returns
 * `{runner, importedAfterRestore}`.
 */
export async function withImports(pyodide, library, imports, newRunner) {
  const imported = importAll(pyodide, imports.filter((name) => !inLibrary(name)));
  if (library) await writeLibrary(pyodide, library);
  const runner = newRunner();
  imported.push(...runner.importModules(imports.filter(inLibrary)));
  return { runner, importedAfterRestore: imports.filter((name) => imported.includes(name)) };
}

/**
 * Import `names` into `pyodide`'s interpreter, not into any cell's namespace; returns those that
 * imported. One that fails is left for its cell to report (promptdojo.kernel_warm_up's
 * `import_modules`: a failure stays in Python).
 */
export function importAll(pyodide, names) {
  if (names.length === 0) return [];
  const module = pyodide.pyimport("promptdojo.kernel_warm_up");
  try {
    const done = module.import_modules(names);
    try {
      return done.toJs();
    } finally {
      done.destroy();
    }
  } finally {
    module.destroy?.();
  }
}
