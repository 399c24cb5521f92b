// No JavaScript module over 400 lines, as no Python module is (tests/test_module_size.py): a
// longer one does more than one job. Checked in the front end's rooms and the Node runner.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAX_LINES = 400;
const FOLDERS = ["page", "kernel", "sw", "shared"].map((room) => `static/js/${room}`);

test("no module is longer than 400 lines", () => {
  const files = [...FOLDERS, "promptdojo/pyodide/node"].flatMap((folder) =>
    readdirSync(path.join(ROOT, folder))
      .filter((name) => /\.m?js$/.test(name))
      .map((name) => path.join(folder, name)),
  );
  assert.ok(files.length > 30, `found only ${files.length} modules`);
  const long = files
    .map((file) => [file, readFileSync(path.join(ROOT, file), "utf8").split("\n").length - 1])
    .filter(([, lines]) => lines > MAX_LINES);
  assert.deepEqual(long, []);
});
