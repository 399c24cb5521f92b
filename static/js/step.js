// One step on the page: an editor per cell, Run / Run all above / Stop / Reset / Check, saved
// edits, and the step's Python namespace state (setup cells, cells to replay after a restart).
import { createEditor, destroyEditor, replaceDoc } from "./editor.js";
import { appendOutput, showResult } from "./output.js";
import { loadEdit, saveEdit } from "./store.js";

/**
 * Per-step kernel state, kept across navigation (the worker keeps each step's namespace):
 * `setupDone` is the promise of the step's setup cells, `succeeded` the cells that ran without
 * error, in order, replayed into a fresh worker after a restart.
 */
export class StepState {
  constructor() {
    this.setupDone = null;
    this.succeeded = [];
  }
}

/**
 * Wire the step rendered inside `root`. Returns `{ cells, unmount }`.
 *
 * @param {object} ctx
 * @param {import("./kernel.js").KernelClient} ctx.kernel
 * @param {() => boolean} ctx.isReady  True once Python is ready.
 * @param {StepState} ctx.state  This step's kernel state.
 * @param {object} ctx.data  The step's JSON (`#step-data`): lesson, step, setup, checks, ...
 * @param {(cellId: string) => void} ctx.onSolved  An exercise's check passed.
 * @param {() => void} ctx.requestStop
 * @param {{stopBeforeStart: boolean, restartNote: string}} ctx.session  Shared across steps.
 */
export function mountStep(root, ctx) {
  const { kernel, state, data } = ctx;
  const key = `${data.lesson}/${data.step}`;
  const sections = [...root.querySelectorAll(".cell")];
  const views = [];
  const flushers = [];

  const ensureSetup = () => {
    state.setupDone ??= (async () => {
      for (const setup of data.setup ?? []) {
        const result = await kernel.run(setup.code, { key, cellId: setup.id, internal: true });
        if (!result.ok) console.error(`setup cell ${setup.id} failed`, result.traceback);
      }
    })();
    return state.setupDone;
  };

  const cells = sections.map((section, index) => {
    const cellId = section.dataset.cellId;
    const pre = section.querySelector(".cell-source");
    const output = section.querySelector(".cell-output");
    const cellStatus = section.querySelector(".cell-status");
    const notice = section.querySelector(".cell-notice");
    const stopButton = section.querySelector(".stop");
    const starterCode = pre.textContent;
    const starterHash = section.dataset.starterHash;
    const editable = pre.dataset.editable !== "false";
    const timeLimit = data.timeLimits?.[cellId] ?? 30;
    const expected = section.dataset.raises ?? null;

    // Restore the learner's code. If the author changed the starter since, keep the learner's
    // code in the editor and ask: never discard it silently.
    const saved = editable ? loadEdit(data.lesson, data.step, cellId) : null;
    let saveTimer = null;
    let unsavedWarned = false;
    const save = () => {
      clearTimeout(saveTimer);
      saveTimer = null;
      const code = view.state.doc.toString();
      const stored = saveEdit(data.lesson, data.step, cellId, code, starterCode, starterHash);
      if (stored) {
        unsavedWarned = false;
      } else if (!unsavedWarned && notice.hidden) {
        // Say so once; the code itself stays in the editor.
        unsavedWarned = true;
        showNotice(
          "This browser did not let promptdojo save your edit (its storage is full or turned " +
            "off). Your code stays in the editor while this page is open: copy it somewhere " +
            "safe before you leave.",
          [],
        );
      }
    };
    flushers.push(() => saveTimer && save());

    const showNotice = (message, actions) => {
      notice.replaceChildren();
      notice.hidden = false;
      const text = document.createElement("span");
      text.textContent = message;
      notice.append(text);
      for (const [label, action] of actions) {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = label;
        button.addEventListener("click", () => {
          notice.hidden = true;
          notice.replaceChildren();
          action();
        });
        notice.append(" ", button);
      }
      notice.querySelector("button")?.focus();
    };

    /** Put the starter back, offering to undo; the editor's own undo works too. */
    const restoreStarter = (message) => {
      const mine = view.state.doc.toString();
      replaceDoc(view, starterCode);
      save();
      showNotice(message, [
        [
          "Undo reset",
          () => {
            replaceDoc(view, mine);
            save();
            view.focus();
          },
        ],
      ]);
    };

    let running = false;
    const execute = async (withCheck = false) => {
      if (!ctx.isReady() || running) return null;
      running = true;
      section.dataset.running = "1";
      output.replaceChildren();
      cellStatus.classList.remove("solved");
      cellStatus.textContent = "Running…";
      stopButton.disabled = false;
      const started = performance.now();
      performance.mark("pd:run-start");
      ctx.session.stopBeforeStart = false;
      await ensureSetup();
      const finish = (text) => {
        cellStatus.textContent = text;
        stopButton.disabled = true;
        running = false;
        delete section.dataset.running;
      };
      if (ctx.session.stopBeforeStart) {
        ctx.session.stopBeforeStart = false;
        performance.mark("pd:stopped");
        finish("Stopped: you pressed Stop");
        return { ok: false, stopped: "you pressed Stop" };
      }
      let first = true;
      const onStream = (name, text) => {
        if (first) performance.mark("pd:first-output");
        first = false;
        appendOutput(output, name, text);
      };
      const code = view.state.doc.toString();
      let result = await kernel.run(code, { key, cellId, onStream, timeLimit });
      if (result.ok) state.succeeded.push({ id: cellId, code });
      if (first) performance.mark("pd:first-output");
      showResult(output, result);
      const ms = Math.round(performance.now() - started);
      if (withCheck && result.ok) {
        result = await kernel.run(data.checks[cellId], { key, cellId: `${cellId}-check` });
        if (result.ok) {
          finish("✓ Solved");
          cellStatus.classList.add("solved");
          ctx.onSolved(cellId);
        } else {
          const why = result.error_type === "AssertionError" && result.error_message;
          finish(why ? `Not yet: ${why}` : `Not yet (${result.error_type})`);
        }
      } else if (result.ok) {
        finish(`Done in ${ms} ms`);
      } else if (result.stopped) {
        performance.mark("pd:stopped");
        finish(`Stopped: ${result.stopped}`);
      } else if (result.error_type === "KernelRestarted") {
        performance.mark("pd:stopped");
        finish(ctx.session.restartNote || "Python was restarted");
      } else if (expected && result.error_type === expected) {
        result.expected = true;
        finish(`Raised ${expected}, as expected`);
      } else {
        finish(`Failed (${result.error_type})`);
      }
      return result;
    };

    const view = createEditor(pre, {
      doc: saved?.code ?? starterCode,
      editable,
      label: `Python code, cell ${cellId}`,
      onRun: () => execute(),
      onRunAndNext: () => {
        execute();
        const next = sections[index + 1];
        next?.querySelector(".cm-content")?.focus();
        next?.scrollIntoView({ block: "nearest" });
      },
      onChange: () => {
        clearTimeout(saveTimer);
        saveTimer = setTimeout(save, 300);
      },
    });
    views.push(view);

    if (saved && saved.starter !== starterHash) {
      showNotice(
        "The lesson's author changed this cell's starting code since you edited it. Your code is kept below.",
        [
          ["Keep mine", () => save()],
          ["Use the new version", () => restoreStarter("Now showing the author's new version.")],
        ],
      );
    }

    section.querySelector(".run").addEventListener("click", () => execute());
    section.querySelector(".check")?.addEventListener("click", () => execute(true));
    stopButton.addEventListener("click", ctx.requestStop);
    section
      .querySelector(".reset")
      ?.addEventListener("click", () => restoreStarter("Reset to the starting code."));
    return { section, execute };
  });

  // "Run all above": the earlier cells of the step in order, stopping at the first failure.
  cells.forEach(({ section }, index) => {
    section.querySelector(".run-above")?.addEventListener("click", async () => {
      for (const cell of cells.slice(0, index)) {
        const result = await cell.execute();
        if (!result || (!result.ok && !result.expected)) return;
      }
    });
  });

  return {
    cells,
    setReady() {
      for (const button of root.querySelectorAll(".cell button.needs-python")) {
        button.disabled = false;
      }
    },
    unmount() {
      for (const flush of flushers) flush();
      for (const view of views) destroyEditor(view);
    },
  };
}
