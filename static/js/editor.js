// CodeMirror 6 editors for cells, themed after the learner's light or dark preference.
import { closeBrackets } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { oneDarkHighlightStyle, oneDarkTheme } from "@codemirror/theme-one-dark";
import { EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";

const dark = globalThis.matchMedia?.("(prefers-color-scheme: dark)");
const views = new Set();
const theme = new Compartment();

function themeFor(isDark) {
  return isDark
    ? [oneDarkTheme, syntaxHighlighting(oneDarkHighlightStyle)]
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
