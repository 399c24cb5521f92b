// A step's cell editors, made when they are needed: those a learner sees first at once, the
// others in idle turns or when a cell asks for its own (a key, a reset, a focus). Making an editor
// takes CodeMirror some milliseconds: made all at once, they hold up a step's switch.
import { createEditor, destroyEditor, placeEditor } from "./editor.js";
import { loadEdit } from "./store.js";

/**
 * One cell's editor, holding the learner's saved code or the starter, made when first asked for
 * (`view()`, which also puts it in the page in place of the cell's code) or by `makeInTurns`.
 * Until then `code()` is the code it will hold. What its keys do (`keys.run`, `keys.runAndNext`,
 * `keys.changed`) is set once the cell is wired (step.js, `mountCell`).
 */
export function cellEditor(section, data) {
  const cellId = section.dataset.cellId;
  const pre = section.querySelector(".cell-source");
  const starterCode = pre.textContent;
  const editable = pre.dataset.editable !== "false";
  // Restore the learner's code. If the author changed the starter since, keep the learner's
  // code in the editor and ask (step.js): never discard it silently.
  const saved = editable ? loadEdit(data.lesson, data.step, cellId) : null;
  const doc = saved?.code ?? starterCode;
  const keys = {};
  let view = null;
  let gone = false;
  return {
    section,
    saved,
    starterCode,
    keys,
    view() {
      if (view || gone) return view;
      view = createEditor({
        doc,
        editable,
        label: `Python code, cell ${cellId}`,
        onRun: () => keys.run?.(),
        onRunAndNext: () => keys.runAndNext?.(),
        onChange: () => keys.changed?.(),
      });
      placeEditor(pre, view);
      return view;
    },
    code: () => (view ? view.state.doc.toString() : doc),
    destroy() {
      gone = true;
      if (view) destroyEditor(view);
    },
  };
}

/**
 * Make now the editors a learner sees first, and return the others, in order. A step shown from
 * its top (`atTop`) needs at once only the editors of its first screen (the others follow in idle
 * turns, before a learner scrolls to them); one shown elsewhere (an anchor, back and forward) gets
 * all of them now, since an editor made later above the place shown would move it.
 */
export function makeInSight(editors, atTop) {
  if (!atTop) {
    for (const editor of editors) editor.view();
    return [];
  }
  const reach = window.innerHeight || 800;
  const start = editors[0]?.section.closest("main")?.getBoundingClientRect().top ?? 0;
  // One layout for all the positions: read them all before any editor changes the page.
  const tops = editors.map(({ section }) => section.getBoundingClientRect().top - start);
  const later = [];
  editors.forEach((editor, index) => (tops[index] < reach ? editor.view() : later.push(editor)));
  return later;
}

/**
 * Make `editors` one a turn, in order, while the page is otherwise idle; returns what stops it
 * (the step leaving). An editor needed before its turn (a key, a reset, a focus) is made then.
 */
export function makeInTurns(editors) {
  // Without idle callbacks (WebKit), a turn waits for two frames: a task of its own would run
  // before the step is first drawn and hold it up, and one right after that frame would hold up
  // whatever the learner does next.
  const idle = globalThis.requestIdleCallback
    ? (work) => requestIdleCallback(work, { timeout: 100 })
    : (work) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(work, 0)));
  let stopped = false;
  const next = () => {
    if (stopped) return;
    const editor = editors.shift();
    if (!editor) return;
    editor.view();
    idle(next);
  };
  if (editors.length) idle(next);
  return () => {
    stopped = true;
  };
}
