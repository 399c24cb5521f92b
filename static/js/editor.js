// CodeMirror 6 editors for cells, themed after the learner's light or dark preference.
import { closeBrackets } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import {
  HighlightStyle,
  bracketMatching,
  defaultHighlightStyle,
  syntaxHighlighting,
} from "@codemirror/language";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { tags as t } from "@lezer/highlight";

const dark = globalThis.matchMedia?.("(prefers-color-scheme: dark)");
const views = new Set();
const theme = new Compartment();

// Colours chosen for at least 4.5:1 contrast on the dark panel (#20232a), active line included;
// the stylesheet's variables give the editor its background, gutter and cursor in both themes.
const darkHighlight = HighlightStyle.define([
  { tag: [t.keyword, t.controlKeyword, t.definitionKeyword, t.moduleKeyword], color: "#d5a6ff" },
  { tag: [t.string, t.special(t.string)], color: "#a8dba8" },
  { tag: [t.comment, t.lineComment], color: "#a7afbf", fontStyle: "italic" },
  { tag: [t.number, t.bool, t.null], color: "#ffab8a" },
  { tag: [t.function(t.variableName), t.function(t.definition(t.variableName))], color: "#94b8ff" },
  { tag: [t.className, t.definition(t.className), t.typeName], color: "#ffd37f" },
  { tag: [t.operator, t.punctuation, t.bracket], color: "#b8e8ff" },
  { tag: [t.propertyName, t.attributeName], color: "#c3d8e0" },
  { tag: [t.self, t.special(t.variableName)], color: "#ffb3c1" },
  { tag: t.invalid, color: "#ff8a80" },
]);

function themeFor(isDark) {
  return isDark
    ? [EditorView.theme({}, { dark: true }), syntaxHighlighting(darkHighlight)]
    : syntaxHighlighting(defaultHighlightStyle, { fallback: true });
}

// Follow the system theme while the page is open, not just at load.
dark?.addEventListener("change", (event) => {
  for (const view of views) view.dispatch({ effects: theme.reconfigure(themeFor(event.matches)) });
});

/**
 * Replace `pre` (which holds the cell's code for readers without JavaScript) with an editor
 * holding `doc`. `onRun` is called for Ctrl/Cmd+Enter, `onRunAndNext` for Shift+Enter (run, then
 * go to the next cell), `onChange(code)` after every edit. Esc then Tab leaves the editor
 * (indentWithTab's escape hatch), so the keyboard is never trapped.
 */
export function createEditor(pre, { doc, editable = true, onRun, onRunAndNext, onChange, label }) {
  const runKeys = keymap.of([
    { key: "Mod-Enter", run: () => (onRun(), true) },
    { key: "Shift-Enter", run: () => ((onRunAndNext ?? onRun)(), true) },
  ]);
  const view = new EditorView({
    state: EditorState.create({
      doc: doc ?? pre.textContent,
      extensions: [
        Prec.highest(runKeys),
        lineNumbers(),
        history(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        python(),
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
  pre.replaceWith(view.dom);
  views.add(view);
  return view;
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
