// No JavaScript function over 80 lines: a longer one does more than one job. Checked in the
// front end's four rooms, the Node runner's scripts, the build script and the tests.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { mask } from "./source.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAX_LINES = 80;
const FOLDERS = [
  ...["page", "kernel", "sw", "shared"].map((room) => `static/js/${room}`),
  "promptdojo/pyodide/node",
  "scripts",
  "tests/js",
];
const NOT_METHODS = new Set(["if", "for", "while", "switch", "catch", "function", "return"]);

function closing(code, open) {
  const pair = { "(": ")", "{": "}" }[code[open]];
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === code[open]) depth += 1;
    else if (code[i] === pair && --depth === 0) return i;
  }
  return -1;
}

function bodyAfterParams(code, paren) {
  const end = closing(code, paren);
  const match = /^\s*\{/.exec(code.slice(end + 1));
  return match ? end + match[0].length : -1;
}

/** `[name, lines]` for every function, method and arrow function with a block body. */
export function functionLengths(source) {
  const code = mask(source);
  const lineOf = (index) => code.slice(0, index).split("\n").length;
  const found = [];
  const add = (name, start, brace) => {
    if (brace < 0) return;
    found.push([`${name}:${lineOf(start)}`, lineOf(closing(code, brace)) - lineOf(start) + 1]);
  };
  for (const m of code.matchAll(/\bfunction\b\s*\*?\s*([\w$]*)\s*\(/g)) {
    add(m[1] || "function", m.index, bodyAfterParams(code, m.index + m[0].length - 1));
  }
  for (const m of code.matchAll(/=>\s*\{/g)) add("arrow", m.index, m.index + m[0].length - 1);
  for (const m of code.matchAll(/^[ \t]+(?:(?:static|async|get|set)\s+)*([A-Za-z_$][\w$]*)\s*\(/gm)) {
    if (NOT_METHODS.has(m[1])) continue;
    add(m[1], m.index, bodyAfterParams(code, m.index + m[0].length - 1));
  }
  return found;
}

function sources() {
  return FOLDERS.flatMap((folder) =>
    readdirSync(path.join(ROOT, folder))
      .filter((name) => /\.(m?js)$/.test(name))
      .map((name) => path.join(folder, name)),
  );
}

test("no function is longer than 80 lines", () => {
  const long = [];
  for (const file of sources()) {
    for (const [name, lines] of functionLengths(readFileSync(path.join(ROOT, file), "utf8"))) {
      if (lines > MAX_LINES) long.push(`${file} ${name}: ${lines} lines`);
    }
  }
  assert.deepEqual(long, []);
});

test("the measure sees functions, methods and arrows, and skips strings and comments", () => {
  const body = (n) => Array.from({ length: n }, (_, i) => `  x${i}();`).join("\n");
  const source = [
    "// function fake() {",
    `export async function big({ a, b }) {\n${body(85)}\n}`,
    `class K {\n  method(x) {\n${body(3)}\n  }\n}`,
    `const f = (y) => {\n  const s = "}{";\n  return \`\${y}}\`;\n};`,
  ].join("\n");
  const lengths = Object.fromEntries(functionLengths(source));
  assert.deepEqual(lengths, { "big:2": 87, "method:90": 5, "arrow:96": 4 });
});
