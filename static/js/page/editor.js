// CodeMirror 6 editors for cells, themed after the learner's light or dark preference.
import { closeBrackets } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { HighlightStyle, bracketMatching, syntaxHighlighting } from "@codemirror/language";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

const dark = globalThis.matchMedia?.("(prefers-color-scheme: dark)");
const views = new Set();
const theme = new Compartment();

/**
 * A highlight style from one colour per kind of token. Both palettes keep at least 4.5:1
 * contrast against the cell background and the active line of their theme (the axe-core test
 * checks both); the stylesheet's variables give the editor its background, gutter and cursor.
 */
function palette(c) {
  return HighlightStyle.define([
    { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword], color: c.keyword },
    { tag: [t.string, t.special(t.string)], color: c.string },
    { tag: [t.comment, t.lineComment], color: c.comment, fontStyle: "italic" },
    { tag: [t.number, t.bool, t.null], color: c.number },
    { tag: [t.function(t.variableName), t.function(t.definition(t.variableName))], color: c.fn },
    { tag: [t.className, t.definition(t.className), t.typeName], color: c.type },
    { tag: [t.operator, t.punctuation, t.bracket], color: c.operator },
    { tag: [t.propertyName, t.attributeName], color: c.property },
    { tag: [t.self, t.special(t.variableName)], color: c.self },
    { tag: t.invalid, color: c.invalid },
  ]);
}

const lightHighlight = palette({
  keyword: "#7a1f9e", string: "#a0281e", comment: "#5f5a48", number: "#0f6b45", fn: "#1f4fbf",
  type: "#0d6570", operator: "#3d4450", property: "#2d4f8a", self: "#8a2f5a", invalid: "#b3261e",
});
const darkHighlight = palette({
  keyword: "#d5a6ff", string: "#a8dba8", comment: "#a7afbf", number: "#ffab8a", fn: "#94b8ff",
  type: "#ffd37f", operator: "#b8e8ff", property: "#c3d8e0", self: "#ffb3c1", invalid: "#ff8a80",
});

function themeFor(isDark) {
  return isDark
    ? [EditorView.theme({}, { dark: true }), syntaxHighlighting(darkHighlight)]
    : syntaxHighlighting(lightHighlight);
}

// Follow the system theme while the page is open, not just at load.
dark?.addEventListener("change", (event) => {
  for (const view of views) view.dispatch({ effects: theme.reconfigure(themeFor(event.matches)) });
});

/**
 * An editor holding `doc`, not yet in the page (`placeEditor` puts it there). `onRun` is called
 * for Ctrl/Cmd+Enter, `onRunAndNext` for Shift+Enter (run, then go to the next cell),
 * `onChange(code)` after every edit. Esc then Tab leaves the editor (indentWithTab's escape
 * hatch), so the keyboard is never trapped.
 *
 * Making one takes CodeMirror some milliseconds (and in Chromium a new editor's question for the
 * document's fonts lays the page out again): lazy-editors.js makes a step's editors as they are
 * needed.
 */
export function createEditor({ doc, editable = true, onRun, onRunAndNext, onChange, label }) {
  const runKeys = keymap.of([
    { key: "Mod-Enter", run: () => (onRun(), true) },
    { key: "Shift-Enter", run: () => ((onRunAndNext ?? onRun)(), true) },
  ]);
  const view = new EditorView({
    state: EditorState.create({
      doc,
      extensions: [
        Prec.highest(runKeys),
        lineNumbers(),
        history(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        python(),
        // Long lines wrap: no sideways scrolling on narrow screens, and no scroll region that
        // a keyboard cannot reach.
        EditorView.lineWrapping,
        theme.of(themeFor(dark?.matches ?? false)),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorState.readOnly.of(!editable),
        EditorView.contentAttributes.of({ "aria-label": label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) onChange?.(update.state.doc.toString());
        }),
      ],
    }),
  });
  views.add(view);
  return view;
}

/** Put `view` in the page in place of `pre`, which holds the cell's code without JavaScript. */
export function placeEditor(pre, view) {
  pre.replaceWith(view.dom);
}

/** Replace the whole text of `view` as one undoable change (Ctrl/Cmd+Z brings the old text back). */
export function replaceDoc(view, text) {
  view.dispatch({
    changes: { from: 0, to: view.state.doc.length, insert: text },
    userEvent: "input.replace",
  });
}

/** Tear an editor down when its step leaves the page. */
export function destroyEditor(view) {
  views.delete(view);
  view.destroy();
}
