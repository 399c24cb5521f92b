// wheels.js in the pinned Pyodide (314.0.7, from node_modules): a wheel is checked, unpacked and
// installed as loadPackage would, and a wheel that cannot be used is refused before anything is
// written. (numpy's shared libraries are covered in Pyodide 0.29.0: tests/pyodide/test_wheels.py.)
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { strToU8, unzipSync, zipSync } from "fflate";
import {
  installWheels,
  prepareWheel,
  prepareWheels,
  unzipArchive,
} from "../../static/js/kernel/wheels.js";

const require = createRequire(import.meta.url);
const core = path.dirname(require.resolve("pyodide/package.json")) + path.sep;

function wheel(name, members) {
  const files = Object.fromEntries(Object.entries(members).map(([n, text]) => [n, strToU8(text)]));
  const bytes = zipSync(files);
  return {
    name,
    file_name: `${name}-1.0-py3-none-any.whl`,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    install_dir: "site",
    bytes: Promise.resolve(bytes),
  };
}

const GOOD = {
  "tinypkg/__init__.py": "from tinypkg.deep.answer import ANSWER\n",
  "tinypkg/deep/answer.py": "ANSWER = 42\n",
  "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
};

let pyodide;
before(async () => {
  const { loadPyodide } = await import(pathToFileURL(path.join(core, "pyodide.mjs")).href);
  pyodide = await loadPyodide({ indexURL: core });
});

test("a prepared wheel installs as loadPackage would, and imports", async () => {
  await installWheels(pyodide, await prepareWheels([wheel("tinypkg", GOOD)]));
  const found = pyodide.runPython(`
import importlib.metadata as metadata
import tinypkg
dist = metadata.distribution("tinypkg")
[tinypkg.ANSWER, dist.version, dist.read_text("INSTALLER"), dist.read_text("PYODIDE_SOURCE")]
`);
  assert.deepEqual(found.toJs(), [42, "1.0", "pyodide.loadPackage", "pyodide"]);
  assert.equal(pyodide.loadedPackages.tinypkg, "default channel");
});

test("a wheel whose bytes are not the lock's is refused, naming it", async () => {
  const damaged = { ...wheel("tinypkg", GOOD), sha256: "0".repeat(64) };
  await assert.rejects(prepareWheel(damaged), /tinypkg-1\.0-py3-none-any\.whl is damaged/);
});

test("members outside the install folder, .data folders or no .dist-info: refused unwritten", async () => {
  const refused = [
    [{ ...GOOD, "../escape.py": "x = 1\n" }, /\.\.\/escape\.py is a path that climbs out/],
    [{ ...GOOD, "/etc/evil.py": "x = 1\n" }, /\/etc\/evil\.py is an absolute path/],
    [{ ...GOOD, "tinypkg-1.0.data/scripts/run": "#!/bin/sh\n" }, /which only loadPackage installs/],
    [{ "tinypkg/__init__.py": "" }, /has no \.dist-info folder/],
  ];
  for (const [members, reason] of refused) {
    await assert.rejects(prepareWheel(wheel("tinypkg", members)), reason);
  }
});

/** Random text: deflates to about three quarters of its size (a member that stays deflated). */
function randomText(length) {
  return strToU8(randomBytes(length).toString("base64"));
}

/** Whether this Node's DecompressionStream knows raw deflate (Node 20.12 and later). */
function nativeInflates() {
  try {
    new DecompressionStream("deflate-raw");
    return true;
  } catch {
    return false;
  }
}

test("deflated members, small ones too, inflate natively, in archive order, to fflate's bytes", async () => {
  const zip = zipSync({
    "big/first.txt": randomText(96_000),
    "small.py": strToU8("x = 1\n"),
    "stored.bin": [randomText(2_000), { level: 0 }],
    "big/second.txt": randomText(48_000),
  });
  const expected = unzipSync(zip);
  const Native = globalThis.DecompressionStream;
  let nativeRuns = 0;
  globalThis.DecompressionStream = class extends Native {
    constructor(format) {
      super(format);
      nativeRuns += 1;
    }
  };
  try {
    for (const native of nativeInflates() ? [true, false] : [false]) {
      nativeRuns = 0;
      const { names, files } = await unzipArchive(zip, "test.zip", native);
      assert.deepEqual(names, ["big/first.txt", "small.py", "stored.bin", "big/second.txt"]);
      for (const name of names) assert.deepEqual(files[name], expected[name], name);
      assert.equal(nativeRuns, native ? 3 : 0); // every member but the stored one
    }
  } finally {
    globalThis.DecompressionStream = Native;
  }
});

test("an archive that is not one, is cut short, or does not inflate is damaged", async () => {
  const first = "a/first.txt";
  const zip = zipSync({ [first]: randomText(40_000), "b.py": strToU8("b = 2\n") });
  const compressed = new DataView(zip.buffer).getUint32(18, true); // the first local header's
  const secondHeader = 30 + first.length + compressed; // cut just after the first member
  assert.equal(new DataView(zip.buffer).getUint32(secondHeader, true), 0x04034b50);
  const cuts = [60, secondHeader, zip.length - 30];
  await assert.rejects(unzipArchive(new Uint8Array(500).fill(7), "x.zip"), /x\.zip is damaged/);
  for (const cut of cuts) {
    await assert.rejects(unzipArchive(zip.subarray(0, cut), "x.zip"), /x\.zip is damaged/);
  }
  const broken = zip.slice();
  broken[30 + first.length] = 0xff; // the first deflate block: a reserved block type
  for (const native of nativeInflates() ? [true, false] : [false]) {
    await assert.rejects(unzipArchive(broken, "x.zip", native), /x\.zip is damaged/);
  }
});
