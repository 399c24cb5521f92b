// The front end's rooms, as tests/test_rooms.py holds Python's: the folder says where a module
// runs, and imports go one way.
//   page/    the step and index pages' main thread: may import shared/ and npm packages
//   kernel/  the kernel and download workers: shared/ only, and no DOM
//   sw/      the service worker: shared/ only, and no DOM
//   shared/  what more than one of them needs: imports nothing of ours, and no DOM
// A room may import its own modules. The npm packages the three DOM-free rooms use are named
// here, so that a new one is a decision someone made: fflate unzips wheels in the kernel worker,
// zstddec decodes zstd in whichever worker meets a zstd file.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { mask } from "./source.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const JS = "static/js";

/** For each room: the rooms it may import, the npm packages (`true`: any), whether it may touch the DOM. */
export const ROOMS = {
  page: { imports: ["page", "shared"], npm: true, dom: true },
  kernel: { imports: ["kernel", "shared"], npm: ["fflate"], dom: false },
  sw: { imports: ["sw", "shared"], npm: [], dom: false },
  shared: { imports: ["shared"], npm: ["zstddec"], dom: false },
};

/** The page's globals: a module that names one runs on a page, not in a worker. */
const DOM = /(?<![\w$.])(document|window|localStorage|sessionStorage|HTMLElement|customElements|requestAnimationFrame)\b/g;

/** Every file under static/js, as a Map of its path (`page/app.js`) to its text. */
function frontEnd() {
  const files = new Map();
  const walk = (folder) => {
    for (const name of readdirSync(path.join(ROOT, JS, folder))) {
      const relative = folder ? `${folder}/${name}` : name;
      if (statSync(path.join(ROOT, JS, relative)).isDirectory()) walk(relative);
      else files.set(relative, readFileSync(path.join(ROOT, JS, relative), "utf8"));
    }
  };
  walk("");
  return files;
}

/** `[{specifier, line}]` for each import of `source` whose specifier is written out (static
 * imports, re-exports, and `import("…")` with a literal); comments and JSDoc types are not read. */
export function importsOf(source) {
  const code = mask(source);
  const found = [];
  for (const m of code.matchAll(/\b(import|from)\b/g)) {
    let at = m.index + m[0].length;
    while (/\s/.test(source[at])) at += 1;
    if (m[1] === "import" && source[at] === "(") at += 1;
    const quote = source[at];
    if (quote !== '"' && quote !== "'") continue;
    const end = source.indexOf(quote, at + 1);
    found.push({ specifier: source.slice(at + 1, end), line: code.slice(0, m.index).split("\n").length });
  }
  return found;
}

const packageOf = (specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

/** What breaks the rooms' rules in `files` (a Map as `frontEnd` makes), one line each. */
export function roomProblems(files) {
  const problems = [];
  const graph = new Map();
  for (const [file, source] of files) {
    const room = file.split("/")[0];
    const rules = ROOMS[room];
    if (!rules || !file.includes("/") || file.split("/").length > 2 || !file.endsWith(".js")) {
      problems.push(`${file}: not in a room: put each module in ${Object.keys(ROOMS).join("/, ")}/`);
      continue;
    }
    graph.set(file, []);
    for (const { specifier, line } of importsOf(source)) {
      if (specifier.startsWith(".")) {
        const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
        const into = target.split("/")[0];
        if (!files.has(target)) problems.push(`${file}:${line}: imports ${specifier}, which is not there`);
        else if (!rules.imports.includes(into)) {
          problems.push(`${file}:${line}: ${room}/ imports ${into}/ (${specifier}); it may import ${rules.imports.join("/, ")}/`);
        } else graph.get(file).push(target);
      } else if (rules.npm !== true && !rules.npm.includes(packageOf(specifier))) {
        problems.push(`${file}:${line}: ${room}/ imports the npm package ${packageOf(specifier)}; name it in ROOMS if it is meant`);
      }
    }
    if (!rules.dom) {
      const code = mask(source);
      for (const m of code.matchAll(DOM)) {
        const line = code.slice(0, m.index).split("\n").length;
        problems.push(`${file}:${line}: ${room}/ runs where there is no DOM, but names ${m[1]}`);
      }
    }
  }
  return [...problems, ...cycles(graph)];
}

/** Each import loop in `graph` (module → the modules it imports), once. */
function cycles(graph) {
  const found = [];
  const state = new Map(); // module → "open" while on the path, "done" after
  const visit = (module, trail) => {
    state.set(module, "open");
    for (const next of graph.get(module) ?? []) {
      if (state.get(next) === "open") found.push(`import loop: ${[...trail.slice(trail.indexOf(next)), next].join(" → ")}`);
      else if (!state.has(next)) visit(next, [...trail, next]);
    }
    state.set(module, "done");
  };
  for (const module of graph.keys()) if (!state.has(module)) visit(module, [module]);
  return found;
}

test("every front-end module is in a room, and imports run the rooms' way", () => {
  const files = frontEnd();
  assert.ok(files.size > 20, `expected the front end under ${JS}, found ${files.size} files`);
  for (const room of Object.keys(ROOMS)) {
    assert.ok([...files.keys()].some((file) => file.startsWith(`${room}/`)), `${room}/ is empty`);
  }
  assert.deepEqual(roomProblems(files), []);
});

test("the rules catch a module out of its room, a wrong arrow, the DOM in a worker and a loop", () => {
  const files = new Map([
    ["loose.js", ""],
    ["page/a.js", 'import { k } from "../kernel/k.js";\nimport { EditorView } from "@codemirror/view";'],
    ["kernel/k.js", '// import { a } from "../page/a.js";\nimport { s } from "../shared/s.js";\ndocument.title = "x";'],
    ["kernel/z.js", 'import { unzip } from "fflate";\nconst b = await import("./gone.js");\nconst t = "window";'],
    ["sw/w.js", 'import MiniSearch from "minisearch";'],
    ["shared/s.js", 'import { t } from "./t.js";\nexport { w } from "../sw/w.js";'],
    ["shared/t.js", 'import { s } from "./s.js";\nimport { ZSTD } from "zstddec/stream";'],
  ]);
  assert.deepEqual(roomProblems(files), [
    "loose.js: not in a room: put each module in page/, kernel/, sw/, shared/",
    "page/a.js:1: page/ imports kernel/ (../kernel/k.js); it may import page/, shared/",
    "kernel/k.js:3: kernel/ runs where there is no DOM, but names document",
    "kernel/z.js:2: imports ./gone.js, which is not there",
    "sw/w.js:1: sw/ imports the npm package minisearch; name it in ROOMS if it is meant",
    "shared/s.js:2: shared/ imports sw/ (../sw/w.js); it may import shared/",
    "import loop: shared/s.js → shared/t.js → shared/s.js",
  ]);
});
