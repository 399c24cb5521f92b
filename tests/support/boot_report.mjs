// Boot Pyodide under Node as `promptdojo check --pyodide` does (boot_node.mjs) and report, as JSON
// on stdout, the boot's phases and what the lesson's packages left in the interpreter: every file
// under site-packages (path, size, SHA-256), the packages' install records, loadedPackages, and a
// numpy result. Used by tests/pyodide/test_wheels.py; argv[2] is the job file.
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
json.dumps({
    "files": sorted(files),
    "records": records,
    "inverse": np.linalg.inv(np.array([[2.0, 1.0], [1.0, 3.0]])).ravel().tolist(),
    "escaped": os.path.exists(os.path.join(site, "..", "escape.py")),
})
`);
console.log(JSON.stringify({ phases, loaded: { ...runner.pyodide.loadedPackages }, ...JSON.parse(report) }));
