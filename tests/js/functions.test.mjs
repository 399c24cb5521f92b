// No JavaScript function over 80 lines: a longer one does more than one job. Checked in the
// page's modules, the Node runner's scripts and the build script.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAX_LINES = 80;
const FOLDERS = ["static/js", "promptdojo/pyodide/node", "scripts", "tests/js"];
const NOT_METHODS = new Set(["if", "for", "while", "switch", "catch", "function", "return"]);

/** `source` with comments, strings and template literals blanked (newlines kept). */
export function mask(source) {
  let out = "";
  let i = 0;
  const blank = (text) => text.replace(/[^\n]/g, " ");
  while (i < source.length) {
    const two = source.slice(i, i + 2);
    let end = i + 1;
    if (two === "//") end = source.indexOf("\n", i) === -1 ? source.length : source.indexOf("\n", i);
    else if (two === "/*") end = source.indexOf("*/", i + 2) + 2;
    else if (source[i] === '"' || source[i] === "'") {
      end = i + 1;
      // Bounded: a quote in a regex literal opens no string that ends (the file's end does).
      while (end < source.length && source[end] !== source[i]) end += source[end] === "\\" ? 2 : 1;
      end += 1;
    } else if (source[i] === "`") {
      end = i + 1;
      let depth = 0;
      while (end < source.length && (depth > 0 || source[end] !== "`")) {
        if (source[end] === "\\") end += 1;
        else if (source.startsWith("${", end)) depth += 1;
        else if (depth > 0 && source[end] === "}") depth -= 1;
        end += 1;
      }
      end += 1;
    } else {
      out += source[i];
      i += 1;
      continue;
    }
    out += blank(source.slice(i, end));
    i = end;
  }
  return out;
}

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
