// What the page's cells import, before "ready" (kernel/imports.js): after a restore the learner
// bundle comes last (download-order.js), so the packages' modules are imported before it is
// written, and the library's own modules after.
import assert from "node:assert/strict";
import test from "node:test";
import { importAll, withImports } from "../../static/js/kernel/imports.js";
import { LIBRARY_DIR } from "../../static/js/kernel/library.js";

/**
 * A Pyodide stand-in that logs imports and file writes; `broken` names modules that fail. Its
 * imports go through promptdojo.kernel_warm_up's `import_modules`, as Pyodide's would.
 */
function fakePyodide(log, broken = []) {
  const kernelWarmUp = {
    import_modules(names) {
      const done = [...names].filter((name) => !broken.includes(name));
      for (const name of done) log.push(`import ${name}`);
      return { toJs: () => done, destroy: () => {} };
    },
  };
  return {
    pyimport: (name) => (assert.equal(name, "promptdojo.kernel_warm_up"), kernelWarmUp),
    FS: {
      mkdirTree: () => {},
      writeFile: (path) => log.push(`write ${path.slice(LIBRARY_DIR.length + 1)}`),
    },
  };
}

const IMPORTS = ["numpy", "promptdojo.decoding", "promptdojo", "json"];
const LIBRARY = { names: ["promptdojo/decoding.py"], files: { "promptdojo/decoding.py": "" } };

test("after a restore, the packages' modules are imported before the bundle is written", async () => {
  const log = [];
  const pyodide = fakePyodide(log);
  let bundle = null;
  const library = new Promise((resolve) => (bundle = resolve));
  const imported = withImports(pyodide, library, IMPORTS, () => {
    log.push("runner");
    return { importModules: (names) => importAll(pyodide, names) };
  });
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(log, ["import numpy", "import json"]); // the bundle is still on its way
  bundle(LIBRARY);
  const { importedAfterRestore } = await imported;
  assert.deepEqual(log, [
    "import numpy",
    "import json",
    "write promptdojo/decoding.py",
    "runner",
    "import promptdojo.decoding",
    "import promptdojo",
  ]);
  assert.deepEqual(importedAfterRestore, IMPORTS); // in the config's order
});

test("after a cold boot nothing is written again; a module that fails is left out", async () => {
  const log = [];
  const pyodide = fakePyodide(log, ["promptdojo.decoding"]);
  const { importedAfterRestore } = await withImports(pyodide, null, IMPORTS, () => ({
    importModules: (names) => importAll(pyodide, names),
  }));
  assert.deepEqual(log, ["import numpy", "import json", "import promptdojo"]);
  assert.deepEqual(importedAfterRestore, ["numpy", "promptdojo", "json"]);
});

test("nothing to import asks nothing of the interpreter", () => {
  const pyodide = { pyimport: () => assert.fail("no import was asked for") };
  assert.deepEqual(importAll(pyodide, []), []);
});
