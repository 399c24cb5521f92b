// One step on the page: an editor per cell, Run / Run all above / Stop / Reset / Check, and
// saved edits. Running goes through the page's kernel session (session.js), which owns the
// step's namespace: its setup cells, and what is replayed after a restart.
import { liveRunner, mountControls } from "./controls.js";
import { replaceDoc } from "./editor.js";
import { mountHelp } from "./help.js";
import { cellEditor, makeInSight, makeInTurns } from "./lazy-editors.js";
import { cellsNeeded, runEarlierFirst, showNameErrorHint, showOrderNote } from "./order.js";
import { appendOutput, showResult, showSetupFailures } from "./output.js";
import { loadControls, saveControls, saveEdit } from "./store.js";

/**
 * Wire the step rendered inside `root`. Returns `{ cells, setReady, flush, unmount }`.
 *
 * @param {object} ctx
 * @param {ReturnType<import("./session.js").KernelSession["enter"]>} ctx.step  This step's session.
 * @param {import("./session.js").KernelSession} ctx.session  The page's kernel session.
 * @param {import("../shared/contract.js").KernelConfig} ctx.config  The kernel config.
 * @param {import("../shared/contract.js").StepData} ctx.data  The step's data (`#step-data`).
 * @param {boolean} ctx.atTop  The step is shown from its top (its first screen first).
 * @param {(cellId: string) => void} ctx.onSolved  An exercise's check passed.
 */
export function mountStep(root, ctx) {
  const sections = [...root.querySelectorAll(".cell")];
  const editors = sections.map((section) => cellEditor(section, ctx.data));
  const cells = [];
  sections.forEach((section, index) => {
    // The cells above this one needs, which its run runs first when they have not run (order.js).
    const needed = () => cellsNeeded(cells, index, ctx.data.needs);
    const earlier = ctx.data.runEarlier === false ? () => [] : needed;
    const [editor, nextEditor] = [editors[index], editors[index + 1]];
    cells.push(mountCell(section, sections[index + 1], { ...ctx, earlier, nextEditor }, editor));
  });
  const stopMaking = makeInTurns(makeInSight(editors, ctx.atTop));
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
    /** Save every edit still waiting for its debounce (before an export, or leaving). */
    flush() {
      for (const cell of cells) cell.flush();
    },
    unmount() {
      stopMaking();
      this.flush();
      // The step's editors leave the page with it; tearing them down can wait for a quiet turn.
      setTimeout(() => editors.forEach((editor) => editor.destroy()), 0);
    },
  };
}

/** Show `message` above the cell, with `[label, action]` buttons that also close it. */
function noticeShower(notice) {
  return (message, actions) => {
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
}

/** Saving the learner's edits of one cell, debounced; a refused save is said once. */
function editSaver({ data, cellId, starterCode, starterHash, notice, showNotice, code }) {
  let timer = null;
  let warned = false;
  const save = () => {
    clearTimeout(timer);
    timer = null;
    const stored = saveEdit(data.lesson, data.step, cellId, code(), starterCode, starterHash);
    if (stored) {
      warned = false;
    } else if (!warned && notice.hidden) {
      // Say so once; the code itself stays in the editor.
      warned = true;
      showNotice(
        "This browser did not let promptdojo save your edit (its storage is full or turned " +
          "off). Your code stays in the editor while this page is open: copy it somewhere " +
          "safe before you leave.",
        [],
      );
    }
  };
  return {
    save,
    later() {
      clearTimeout(timer);
      timer = setTimeout(save, 300);
    },
    flush: () => timer && save(),
  };
}

/** Wire one cell: its editor (`cellEditor`), saved edit, notices and buttons. */
function mountCell(section, next, ctx, editor) {
  const { data } = ctx;
  const { saved, starterCode, keys, code } = editor;
  const cellId = section.dataset.cellId;
  const notice = section.querySelector(".cell-notice");
  const starterHash = section.dataset.starterHash;
  const showNotice = noticeShower(notice);
  const saver = editSaver({ data, cellId, starterCode, starterHash, notice, showNotice, code });
  const controls = cellControls(section, next, ctx);
  /** Put the starter back (and the controls' defaults), offering to undo both. */
  const restoreStarter = (message) => {
    const mine = code();
    const myValues = controls.values();
    replaceDoc(editor.view(), starterCode);
    saver.save();
    controls.reset();
    const undo = () => {
      replaceDoc(editor.view(), mine);
      saver.save();
      controls.restore(myValues);
      editor.view().focus();
    };
    showNotice(message, [["Undo reset", undo]]);
  };
  const help = mountHelp(section, data);
  const execute = cellRunner(section, { ...ctx, help }, code, controls);
  controls.live = liveRunner({
    execute: () => execute(false, true),
    inflight: () => execute.inflight,
    interrupt: () => ctx.session.interruptCell(section.dataset.cellId, "a control changed"),
  });
  keys.run = () => execute();
  keys.runAndNext = () => {
    execute();
    ctx.nextEditor?.view()?.focus();
    next?.scrollIntoView({ block: "nearest" });
  };
  keys.changed = () => saver.later();
  if (saved && saved.starter !== starterHash) {
    showNotice(
      "The lesson's author changed this cell's starting code since you edited it. Your code is kept below.",
      [
        ["Keep mine", () => saver.save()],
        ["Use the new version", () => restoreStarter("Now showing the author's new version.")],
      ],
    );
  }
  section.querySelector(".run").addEventListener("click", () => execute());
  section.querySelector(".check")?.addEventListener("click", () => execute(true));
  section.querySelector(".stop").addEventListener("click", () => ctx.session.requestStop());
  section
    .querySelector(".reset")
    ?.addEventListener("click", () => restoreStarter("Reset to the starting code."));
  const edited = () => code() !== starterCode;
  return { id: cellId, section, execute, edited, flush: saver.flush };
}

/** The cell's controls (controls.js), saved with the learner's edits; a change re-runs the cell. */
function cellControls(section, next, ctx) {
  const { lesson, step } = ctx.data;
  const cellId = section.dataset.cellId;
  const controls = mountControls(section, {
    values: loadControls(lesson, step, cellId),
    save: (values) => saveControls(lesson, step, cellId, values),
    changed: () => controls.live?.(),
    hasLater: Boolean(next),
  });
  controls.preview(ctx.data.controls?.[cellId]);
  return controls;
}

/**
 * `execute(withCheck, live)`: run the cell (and its exercise's check) with its controls' values,
 * showing output and status; `execute.inflight` is the run in progress, if any.
 */
function cellRunner(section, ctx, code, controls) {
  const { data, step, config } = ctx;
  const cellId = section.dataset.cellId;
  const output = section.querySelector(".cell-output");
  const cellStatus = section.querySelector(".cell-status");
  const stopButton = section.querySelector(".stop");
  const timeLimit = data.timeLimits?.[cellId] ?? config.timeLimit;
  let running = false;
  const finish = (text) => {
    cellStatus.textContent = text;
    stopButton.disabled = true;
    running = false;
    delete section.dataset.running;
  };
  const execute = async (withCheck = false, live = false) => {
    if (!ctx.session.runnable || running) return null;
    running = true;
    section.dataset.running = "1";
    output.replaceChildren();
    cellStatus.classList.remove("solved");
    cellStatus.textContent = "Running…";
    stopButton.disabled = false;
    const started = performance.now();
    performance.mark("pd:run-start");
    let first = true;
    const onStream = (name, text) => {
      if (first) performance.mark("pd:first-output");
      first = false;
      appendOutput(output, name, text);
    };
    const stops = ctx.session.stopCount();
    const ranFirst = await runEarlierFirst(ctx.earlier(), step);
    const values = controls.values();
    let result =
      ctx.session.stopCount() === stops
        ? await step.runCell(cellId, code(), { onStream, timeLimit, controls: values })
        : { ok: false, stopped: "you pressed Stop", notStarted: true };
    showControls(controls, result, live);
    showOrderNote(output, ranFirst);
    if (result.notStarted) {
      performance.mark("pd:stopped");
      finish(`Stopped: ${result.stopped}`);
      return { ok: false, stopped: result.stopped };
    }
    if (first) performance.mark("pd:first-output");
    showResult(output, result, config);
    if (result.setupFailures) showSetupFailures(output, result.setupFailures);
    showNameErrorHint(output, result, data, cellId);
    const ms = Math.round(performance.now() - started);
    if (withCheck && result.ok) {
      result = await step.runCheck(cellId, data.checks[cellId]);
      finish(checkVerdict(result, cellStatus));
      if (result.ok) ctx.onSolved(cellId);
    } else {
      const verdict = runVerdict(result, ms, section.dataset.raises ?? null, ctx.session.restartNote);
      if (verdict.expected) result = { ...result, expected: true }; // earlier-cell runs go on past it
      finish(verdict.text);
    }
    if (withCheck && !result.ok && !result.stopped) ctx.help.checkFailed();
    return result;
  };
  const tracked = (withCheck = false, live = false) => {
    if (!live) {
      controls.live?.cancel(); // this run reads the newest values: no re-run is due after it
      if (tracked.inflight) return waitTurn(withCheck);
    }
    const already = running;
    const run = execute(withCheck, live);
    if (!already && running) {
      tracked.inflight = run;
      run.finally(() => {
        if (tracked.inflight === run) tracked.inflight = null;
      });
    }
    return run;
  };
  tracked.inflight = null;
  const waitTurn = turnTaker(tracked, ctx.session);
  return tracked;
}

/**
 * A Run or Check clicked while the cell's run is in flight (a live re-run after a control change,
 * or an earlier click) waits for that run to end and then runs, with the values shown then,
 * instead of being dropped. One click waits at a time (the newest decides whether it checks),
 * and a Stop meanwhile drops it. `start` is the cell's tracked `execute`.
 */
function turnTaker(start, session) {
  let waiting = null;
  return (withCheck) => {
    if (waiting) {
      waiting.withCheck = withCheck;
      return waiting.run;
    }
    const turn = { withCheck, stops: session.stopCount() };
    waiting = turn;
    turn.run = (async () => {
      while (start.inflight) await start.inflight.catch(() => null);
      waiting = null;
      return session.stopCount() === turn.stops ? start(turn.withCheck) : null;
    })();
    return turn.run;
  };
}

/** Show the controls a run declared: all of them when it ran to its end or refused a value. */
function showControls(controls, result, live) {
  if (!Array.isArray(result.controls)) return; // stopped before Python, or Python restarted
  const refused = result.error_type === "ControlError";
  if (refused && !result.controls.length) {
    controls.reset(); // the values were not even plain data: every control back to its default
  } else if (
    result.ok ||
    refused ||
    (result.controls.length && result.error_type !== "KeyboardInterrupt")
  ) {
    controls.render(result.controls, refused);
  }
  if (live) controls.noteLater();
}

/** The status line after an exercise's check. */
function checkVerdict(result, cellStatus) {
  if (result.ok) {
    cellStatus.classList.add("solved");
    return "✓ Solved";
  }
  const why = result.error_type === "AssertionError" && result.error_message;
  return why ? `Not yet: ${why}` : `Not yet (${result.error_type})`;
}

/**
 * The status line after a run, as `{text, expected}`: `expected` when the run raised what the
 * cell expects (`raises=`), a failure the lesson wants.
 */
function runVerdict(result, ms, expected, restartNote) {
  if (result.ok) return { text: `Done in ${ms} ms` };
  if (result.stopped) {
    performance.mark("pd:stopped");
    return { text: `Stopped: ${result.stopped}` };
  }
  if (result.error_type === "KernelRestarted") {
    performance.mark("pd:stopped");
    return { text: restartNote || "Python was restarted" };
  }
  if (expected && result.error_type === expected) {
    return { text: `Raised ${expected}, as expected`, expected: true };
  }
  return { text: `Failed (${result.error_type})` };
}
