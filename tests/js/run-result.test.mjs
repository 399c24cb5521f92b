// CellRunner.run (boot.js) with the real kernel in the pinned Pyodide: a Stop that lands after
// the cell's code has finished, while its result is converted for the page, costs neither the
// result nor the worker (it used to fail the conversion: "Python crashed: ConversionError").
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CellRunner } from "../../static/js/kernel/boot.js";
import { SIGINT } from "../../static/js/shared/stopper.js";

const require = createRequire(import.meta.url);
const core = path.dirname(require.resolve("pyodide/package.json")) + path.sep;
const PACKAGE = fileURLToPath(new URL("../../promptdojo/", import.meta.url));
const KERNEL_FILES = ["__init__.py", "kernel.py", "kernel_warm_up.py", "ui.py"];

let pyodide;
before(async () => {
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  pyodide = await loadPyodide({ indexURL: core });
  pyodide.FS.mkdirTree("/lib/promptdojo");
  for (const name of KERNEL_FILES) {
    pyodide.FS.writeFile(`/lib/promptdojo/${name}`, readFileSync(path.join(PACKAGE, name)));
  }
  pyodide.runPython("import sys\nsys.path.insert(0, '/lib')");
  // Converting a result runs a little Python (CellResult.to_dict); Python looks at the signal
  // buffer only every so often, so a Stop lands there in a real page now and then. Here the
  // conversion is made long enough that Python surely looks while it runs.
  pyodide.runPython(`
from promptdojo.kernel import CellResult
_to_dict = CellResult.to_dict
def _slow_to_dict(self):
    for _ in range(200_000):
        pass
    return _to_dict(self)
CellResult.to_dict = _slow_to_dict
`);
});

/** A runner whose kernel's `run` returns, and then the page's Stop arrives: the moment between
 * the cell's end and the conversion of its result. */
function runnerStoppedAtTheEnd() {
  const kernel = pyodide.pyimport("promptdojo.kernel").Kernel();
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const runner = new CellRunner(pyodide, kernel, {});
  runner.setInterruptBuffer(shared);
  const run = kernel.run;
  runner.pyKernel = {
    run: {
      callKwargs: (...args) => {
        const result = run.callKwargs(...args);
        Atomics.store(shared, 0, SIGINT); // Stop, pressed just as the cell finished
        return result;
      },
    },
  };
  return { runner, shared };
}

test("a Stop landing while a finished cell's result is converted keeps the result", () => {
  const { runner, shared } = runnerStoppedAtTheEnd();
  const result = runner.run("x = {'a': [1, 2, 3]}\nx", { key: "s", cellId: "c" });
  assert.equal(result.ok, true);
  assert.match(result.value["text/plain"], /'a': \[1, 2, 3\]/);
  assert.equal(Atomics.load(shared, 0), 0, "the signal was spent, not left for the next cell");
  // The interpreter is whole: the next run goes as usual.
  const next = runner.run("print(6 * 7)\n6 * 7", { key: "s", cellId: "d" });
  assert.equal(next.ok, true);
  assert.equal(next.value["text/plain"], "42");
});
