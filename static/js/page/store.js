// What the learner keeps in this browser: edited cells and progress, in localStorage.
//
// Keys are versioned and namespaced so that an export holds exactly our data:
//   promptdojo:v1:edit:<lesson>:<step>:<cell>  -> {code, starter}   (starter: hash of the
//                                                 author's code the edit started from)
//   promptdojo:v1:progress:<lesson>            -> {visited: [step...], solved: {step: [cell...]}}
//   promptdojo:v1:controls:<lesson>:<step>:<cell> -> {name: value}  (the cell's controls the
//                                                 learner moved off the author's default)
//   promptdojo:v1:help:<lesson>:<step>:<cell>  -> {hints, failed, solution}  (an exercise's help:
//                                                 hints opened, a Check failed, solution shown)

const PREFIX = "promptdojo:v1:";
export const EXPORT_FORMAT = "promptdojo-work";

function read(key) {
  try {
    return JSON.parse(localStorage.getItem(PREFIX + key) ?? "null");
  } catch {
    return null; // storage disabled, or a value we did not write
  }
}

function write(key, value) {
  try {
    if (value === null) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, JSON.stringify(value));
    return true;
  } catch {
    return false; // quota exceeded or storage disabled: the editor still holds the code
  }
}

const editKey = (lesson, step, cell) => `edit:${lesson}:${step}:${cell}`;

/** The learner's saved code for a cell, or null: `{code, starter}`. */
export function loadEdit(lesson, step, cell) {
  const saved = read(editKey(lesson, step, cell));
  return saved && typeof saved.code === "string" ? saved : null;
}

/** Save the learner's code; code equal to the author's starter is not an edit and is dropped. */
export function saveEdit(lesson, step, cell, code, starterCode, starterHash) {
  const value = code === starterCode ? null : { code, starter: starterHash };
  return write(editKey(lesson, step, cell), value);
}

const controlsKey = (lesson, step, cell) => `controls:${lesson}:${step}:${cell}`;

/** A flat object of names to booleans, numbers or texts: what a cell's controls hold. */
function plainValues(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  return Object.values(value).every((v) => ["boolean", "number", "string"].includes(typeof v));
}

/** The values the learner gave a cell's controls, by name: `{}` when none. */
export function loadControls(lesson, step, cell) {
  const saved = read(controlsKey(lesson, step, cell));
  return plainValues(saved) ? saved : {};
}

/** Save a cell's control values; none (all at their defaults) removes the entry. */
export function saveControls(lesson, step, cell, values) {
  const empty = Object.keys(values).length === 0;
  return write(controlsKey(lesson, step, cell), empty ? null : values);
}

const helpKey = (lesson, step, cell) => `help:${lesson}:${step}:${cell}`;

/** A help record as stored, or as a file holds it: whole hints opened and two flags. */
function plainHelp(value) {
  const hints = Number.isInteger(value?.hints) && value.hints >= 0 ? value.hints : 0;
  return { hints, failed: value?.failed === true, solution: value?.solution === true };
}

/** How far the learner went into an exercise's help: `{hints, failed, solution}`. */
export function loadHelp(lesson, step, cell) {
  return plainHelp(read(helpKey(lesson, step, cell)));
}

/** Save an exercise's help state. */
export function saveHelp(lesson, step, cell, help) {
  return write(helpKey(lesson, step, cell), plainHelp(help));
}

/** Two help records as one: the further of each (nothing opened is closed again). */
function mergedHelp(mine, theirs) {
  const [a, b] = [plainHelp(mine), plainHelp(theirs)];
  return {
    hints: Math.max(a.hints, b.hints),
    failed: a.failed || b.failed,
    solution: a.solution || b.solution,
  };
}

export function loadProgress(lesson) {
  const progress = read(`progress:${lesson}`) ?? {};
  return {
    visited: Array.isArray(progress.visited) ? progress.visited : [],
    solved: progress.solved && typeof progress.solved === "object" ? progress.solved : {},
  };
}

export function markVisited(lesson, step) {
  const progress = loadProgress(lesson);
  if (!progress.visited.includes(step)) progress.visited.push(step);
  write(`progress:${lesson}`, progress);
  return progress;
}

export function markSolved(lesson, step, cell) {
  const progress = loadProgress(lesson);
  const solved = new Set(progress.solved[step] ?? []);
  solved.add(cell);
  progress.solved[step] = [...solved];
  write(`progress:${lesson}`, progress);
  return progress;
}

/** Everything promptdojo stored in this browser, as one JSON-ready object. */
export function exportWork() {
  const items = {};
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key?.startsWith(PREFIX)) items[key.slice(PREFIX.length)] = read(key.slice(PREFIX.length));
  }
  return { format: EXPORT_FORMAT, version: 1, exported: new Date().toISOString(), items };
}

/**
 * Restore an export. Throws an Error that says what is wrong with the file, and then writes
 * nothing. Progress and help are merged (nothing solved or opened is forgotten); edits in the
 * file win.
 */
export function importWork(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`this file is not JSON (${error.message}); choose a file made by "Export my work"`);
  }
  if (data?.format !== EXPORT_FORMAT || data.version !== 1 || typeof data.items !== "object") {
    throw new Error('this file was not made by "Export my work" (format promptdojo-work, version 1)');
  }
  const entries = Object.entries(data.items).filter(([key]) =>
    ["edit:", "progress:", "controls:", "help:"].some((kind) => key.startsWith(kind)),
  );
  let edits = 0;
  for (const [key, value] of entries) {
    if (key.startsWith("progress:")) {
      const lesson = key.slice("progress:".length);
      const mine = loadProgress(lesson);
      const visited = new Set([...mine.visited, ...(value?.visited ?? [])]);
      const solved = { ...mine.solved };
      for (const [step, cells] of Object.entries(value?.solved ?? {})) {
        solved[step] = [...new Set([...(solved[step] ?? []), ...cells])];
      }
      write(key, { visited: [...visited], solved });
    } else if (key.startsWith("controls:")) {
      if (plainValues(value)) write(key, value);
    } else if (key.startsWith("help:")) {
      write(key, mergedHelp(read(key), value));
    } else if (typeof value?.code === "string") {
      write(key, value);
      edits += 1;
    }
  }
  return { edits };
}

/**
 * Steps done: visited, with every exercise solved. `steps` is `[[number, [exercise ids]], ...]`.
 * Returns the set of step numbers (as strings) that are done.
 */
export function stepsDone(progress, steps) {
  const done = new Set();
  for (const [number, exercises] of steps) {
    const solved = progress.solved[number] ?? [];
    const visited = progress.visited.includes(Number(number));
    if (visited && exercises.every((id) => solved.includes(id))) done.add(String(number));
  }
  return done;
}
