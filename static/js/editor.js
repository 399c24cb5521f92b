// CodeMirror 6 editors for cells.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState, Prec } from "@codemirror/state";
import { EditorView, highlightActiveLine, keymap, lineNumbers } from "@codemirror/view";
import { closeBrackets } from "@codemirror/autocomplete";

/**
 * Replace `pre` (which holds the cell's code for readers without JavaScript) with an editor.
 * `onRun` is called for Ctrl/Cmd+Enter, `onRunAndNext` for Shift+Enter (run, then go to the next
 * cell). Esc then Tab leaves the editor (indentWithTab's escape).
 */
export function createEditor(pre, { editable = true, onRun, onRunAndNext, label }) {
  const runKeys = keymap.of([
    { key: "Mod-Enter", run: () => (onRun(), true) },
    { key: "Shift-Enter", run: () => ((onRunAndNext ?? onRun)(), true) },
  ]);
  const view = new EditorView({
    state: EditorState.create({
      doc: pre.textContent,
      extensions: [
        Prec.highest(runKeys),
        lineNumbers(),
        history(),
        bracketMatching(),
        closeBrackets(),
        highlightActiveLine(),
        python(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorState.readOnly.of(!editable),
        EditorView.contentAttributes.of({ "aria-label": label }),
      ],
    }),
  });
  pre.replaceWith(view.dom);
  return view;
}
