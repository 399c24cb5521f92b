// Compile the modules a lesson's packages load to bytecode, in the Pyodide that runs them:
// `node bytecode.mjs JOB`. With `files` in JOB, compile those files instead (the learner
// bundle's modules, below).
//
// JOB: {pyodide, packageDir, packages, script, out}. The core in `pyodide` loads `packages`
// (their wheels from `packageDir`, checked against its lock), runs `script` (the packages'
// imports and the kernel's warm-up), and compiles every module then loaded from a `.py` file of
// its site-packages into `__pycache__`, as unchecked-hash pycs: the import system then uses them
// whatever the files' times, without reading the source. Being this release's own interpreter,
// its pycs carry the magic number the page's Python expects. Each pyc is written to `out`, and
// `out/modules.json` lists them: [[path below site-packages of the source, of the pyc], ...].
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** Compile the loaded modules; a JSON list of [source, pyc] paths below site-packages. */
const COMPILE = `
import importlib.util, json, py_compile, sys, sysconfig
site = "/" + sysconfig.get_path("purelib").strip("/") + "/"  # the path may start with //
sources = sorted({
    module.__file__ for module in list(sys.modules.values())
    if isinstance(getattr(module, "__file__", None), str)
    and module.__file__.startswith(site) and module.__file__.endswith(".py")
})
mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
compiled = []
for source in sources:
    pyc = py_compile.compile(source, doraise=True, invalidation_mode=mode)
    compiled.append([source[len(site):], pyc[len(site):]])
json.dumps([site, compiled])
`;

/**
 * Compile every source of the JSON list FILES (paths below ROOT in Pyodide's file system), as
 * unchecked-hash pycs in `__pycache__` beside each; a JSON list of [source, pyc] paths below ROOT.
 */
const COMPILE_FILES = `
import json, py_compile
mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
compiled = []
for source in json.loads(FILES):
    pyc = py_compile.compile(ROOT + source, doraise=True, invalidation_mode=mode)
    compiled.append([source, pyc[len(ROOT):]])
json.dumps(compiled)
`;

/**
 * The learner bundle's modules (JOB: {pyodide, files, sourceDir, out}): each of `files` (paths
 * below `sourceDir`) is copied into the interpreter's file system and compiled there, and its pyc
 * written to `out` at the same path; `out/modules.json` lists them as [source, pyc] paths.
 */
async function compileFiles(pyodide, job) {
  const root = "/tmp/promptdojo-bundle/";
  for (const name of job.files) {
    const target = root + name;
    pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
    pyodide.FS.writeFile(target, await readFile(path.join(job.sourceDir, name)));
  }
  pyodide.globals.set("ROOT", root);
  pyodide.globals.set("FILES", JSON.stringify(job.files));
  const compiled = JSON.parse(pyodide.runPython(COMPILE_FILES));
  for (const [, pyc] of compiled) {
    const target = path.join(job.out, pyc);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, pyodide.FS.readFile(root + pyc));
  }
  await writeFile(path.join(job.out, "modules.json"), JSON.stringify(compiled));
}

async function main() {
  const job = JSON.parse(await readFile(process.argv[2], "utf8"));
  const core = path.resolve(job.pyodide) + path.sep;
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  if (job.files) {
    await compileFiles(await loadPyodide({ indexURL: core }), job);
    return;
  }
  const packages = path.resolve(job.packageDir) + path.sep;
  const pyodide = await loadPyodide({
    indexURL: core,
    packageCacheDir: packages,
    packageBaseUrl: packages, // never the CDN
  });
  const errors = [];
  await pyodide.loadPackage(job.packages, {
    messageCallback: () => {},
    errorCallback: (message) => errors.push(message),
  });
  const missing = job.packages.filter((name) => !pyodide.loadedPackages[name]);
  if (missing.length) throw new Error(`${missing.join(", ")} did not load: ${errors.join("; ")}`);
  pyodide.runPython(job.script);
  const [site, compiled] = JSON.parse(pyodide.runPython(COMPILE));
  await mkdir(job.out, { recursive: true });
  for (const [, pyc] of compiled) {
    const target = path.join(job.out, pyc);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, pyodide.FS.readFile(site + pyc));
  }
  await writeFile(path.join(job.out, "modules.json"), JSON.stringify(compiled));
}

main().catch((error) => {
  console.error(`bytecode.mjs: ${String(error?.stack ?? error)}`);
  process.exit(2);
});
