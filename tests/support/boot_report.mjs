// Boot Pyodide under Node as `promptdojo check --pyodide` does (boot_node.mjs) and report, as JSON
// on stdout, the boot's phases and what the lesson's packages left in the interpreter: every file
// under site-packages (path, size, SHA-256), the packages' install records, loadedPackages, and a
// numpy result (and a numpy traceback, and which modules of numpy and of the learner library have a
// usable pyc), and the names in Emscripten's global offset table, with how many are unresolved. Used by tests/pyodide/test_wheels.py and test_bytecode.py; argv[2] is the job file.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

const job = JSON.parse(await readFile(process.argv[2], "utf8"));
const here = path.dirname(new URL(import.meta.url).pathname);
const bootNode = path.join(here, "..", "..", "promptdojo", "pyodide", "node", "boot_node.mjs");
const { bootInNode } = await import(pathToFileURL(bootNode).href);
const phases = [];
const runner = await bootInNode(job, () => {}, (phase, detail) => phases.push([phase, detail]));
const report = runner.pyodide.runPython(`
import hashlib, json, os, sysconfig
import importlib.metadata as metadata
site = sysconfig.get_paths()["purelib"]
files = []
for folder, _, names in os.walk(site):
    for name in names:
        full = os.path.join(folder, name)
        with open(full, "rb") as f:
            files.append([os.path.relpath(full, site), hashlib.sha256(f.read()).hexdigest()])
records = {}
for name in ${JSON.stringify(job.packages)}:
    dist = metadata.distribution(name)
    records[name] = [dist.read_text("INSTALLER"), dist.read_text("PYODIDE_SOURCE")]
import numpy as np
import importlib.util, sys, traceback
import promptdojo.decoding, promptdojo.display, promptdojo.quantization
# numpy's modules from .py files, and those whose pyc is there for this interpreter, unchecked
# (its magic number, flags 0b01): the import system uses such a pyc without reading the source.
def from_py(package):
    return [m for m in list(sys.modules.values()) if m.__name__.split(".")[0] == package
            and str(getattr(m, "__file__", "")).endswith(".py")]
def has_pyc(module):
    try:
        with open(module.__spec__.cached, "rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == (1).to_bytes(4, "little")
try:
    np.linalg.inv(np.ones((2, 3)))
except Exception:
    numpy_traceback = traceback.format_exc()
json.dumps({
    "pycs": [len(from_py("numpy")), sum(map(has_pyc, from_py("numpy"))), sys.dont_write_bytecode],
    "library_pycs": [len(from_py("promptdojo")), sum(map(has_pyc, from_py("promptdojo")))],
    "traceback": numpy_traceback,
    "files": sorted(files),
    "records": records,
    "inverse": np.linalg.inv(np.array([[2.0, 1.0], [1.0, 3.0]])).ravel().tolist(),
    "escaped": os.path.exists(os.path.join(site, "..", "escape.py")),
})
`);
const table = runner.pyodide._module.GOT ?? {};
const offsetTable = {
  names: Object.keys(table).sort(),
  unresolved: Object.values(table).filter((entry) => [0, -1].includes(entry.value)).length,
};
const loaded = { ...runner.pyodide.loadedPackages };
console.log(JSON.stringify({ phases, loaded, offsetTable, ...JSON.parse(report) }));
