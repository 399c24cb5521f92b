// Run Python in real Pyodide under Node, booted by the same module as the browser's worker.
//
//   node run.mjs job.json
//
// job.json: {
//   "boot": "<static/js/kernel/boot.js, or the wheel's copy>",
//   "pyodide": "<folder of the Pyodide core: pyodide.mjs, pyodide.asm.wasm, ...>",
//   "packageDir": "<folder of cached package wheels>",   "packages": ["numpy"],
//   "bundle": "<learner bundle zip>",  "wheels": ["<extra pure-Python wheels>"],
//   "mounts": [{"host": "<folder>", "target": "/work/tests"}],
//   "script": "<Python source; its value, an int, is the exit status>",
//   "showReady": true   (optional: print the boot's ready detail first, as "ready: <JSON>")
// }
// Exit status: the script's value; 3 when a requested package could not be loaded; 2 on errors.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { bootInNode } from "./boot_node.mjs";

async function main() {
  const job = JSON.parse(await readFile(process.argv[2], "utf8"));
  const onStream = (name, text) => {
    (name === "stderr" ? process.stderr : process.stdout).write(text);
  };
  const onPhase = (phase, detail) => {
    if (phase === "ready" && job.showReady) console.log(`ready: ${JSON.stringify(detail)}`);
  };
  const runner = await bootInNode(job, onStream, onPhase);
  const missing = Object.keys(runner.missingPackages);
  if (missing.length) {
    console.error(`not run: ${missing.join(", ")} could not be loaded into Pyodide`);
    for (const name of missing) console.error(`  ${name}: ${runner.missingPackages[name]}`);
    process.exit(3);
  }
  const { pyodide } = runner;
  const WHEELS_DIR = "/home/pyodide/wheels";
  pyodide.FS.mkdirTree(WHEELS_DIR);
  pyodide.pyimport("sys").path.append(WHEELS_DIR);
  for (const wheel of job.wheels ?? []) {
    pyodide.unpackArchive(new Uint8Array(await readFile(wheel)), "wheel", { extractDir: WHEELS_DIR });
  }
  for (const mount of job.mounts ?? []) {
    pyodide.FS.mkdirTree(mount.target);
    pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: path.resolve(mount.host) }, mount.target);
  }
  try {
    const status = await pyodide.runPythonAsync(job.script);
    process.exit(typeof status === "number" ? status : 0);
  } catch (error) {
    console.error(String(error?.message ?? error));
    process.exit(2);
  }
}

main().catch((error) => {
  // One line, not Node's dump of the minified source around the throw.
  console.error(`run.mjs: ${String(error?.message ?? error).split("\n").slice(-3).join(" ")}`);
  process.exit(2);
});
