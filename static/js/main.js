// Page entry for a lesson step: editors for every cell, one kernel worker, Run buttons.
import { createEditor } from "./editor.js";

const PHASE_TEXT = {
  downloading: "Python: downloading…",
  starting: "Python: starting…",
  "python-ready": "Python: loading the lesson library…",
  packages: "Python: loading packages…",
  ready: "Python: ready",
  error: "Python failed to start",
};

function appendOutput(output, className, text) {
  if (className === "truncated") {
    const note = document.createElement("p");
    note.className = "truncated";
    note.textContent = `Output truncated: a cell shows at most ${Number(text).toLocaleString("en")} characters.`;
    output.append(note);
    return;
  }
  let last = output.lastElementChild;
  if (!last || !last.classList.contains(className)) {
    last = document.createElement("pre");
    last.className = className;
    output.append(last);
  }
  last.textContent += text;
}

function showResult(output, result) {
  if (result.ok) {
    const svg = result.value?.["image/svg+xml"];
    const plain = result.value?.["text/plain"];
    if (svg !== undefined) {
      // As an <img>, SVG cannot run scripts or reach the page: safe for learner output.
      const img = document.createElement("img");
      img.className = "value";
      img.alt = plain ?? "picture";
      img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
      output.append(img);
    } else if (plain !== undefined) {
      appendOutput(output, "value", plain);
    }
  } else {
    appendOutput(output, "error", result.traceback || `${result.error_type}: ${result.error_message}`);
  }
}

function main() {
  const config = JSON.parse(document.body.dataset.kernel);
  const stepData = JSON.parse(document.getElementById("step-data")?.textContent || "{}");
  const status = document.querySelector(".kernel-status");
  const cells = [...document.querySelectorAll(".cell")];
  const key = `${config.lesson}/${config.step}`;
  let isReady = false;

  // start.js booted the kernel before this bundle loaded; it replays the phases so far.
  const kernel = window.promptdojoKernel;
  kernel.addPhaseListener((phase, detail) => {
    status.dataset.phase = phase;
    let text = PHASE_TEXT[phase] ?? `Python: ${phase}`;
    if (phase === "error") text += `: ${detail.message}`;
    if (phase === "ready" && detail.missing?.length) {
      text += ` (without ${detail.missing.join(", ")}: not in the package cache)`;
    }
    status.textContent = text;
    if (phase === "ready") {
      isReady = true;
      for (const button of document.querySelectorAll(".cell button:not(.stop)")) {
        button.disabled = false;
      }
    }
  });

  // Cells that ran without error, in order: replayed into a fresh worker after a restart.
  const succeeded = [];
  let restartNote = "";
  kernel.addRestartListener((reason) => {
    const replay = [...(stepData.setup ?? []), ...succeeded];
    restartNote = `Python was restarted (${reason}); replayed ${succeeded.length} earlier cell(s).`;
    setupDone = (async () => {
      for (const cell of replay) {
        await kernel.run(cell.code, { key, cellId: cell.id, internal: true });
      }
    })();
  });
  // Stop can come before the run reaches the kernel (setup cells still running): remember it.
  let stopBeforeStart = false;
  const requestStop = () => {
    if (kernel.lastLearnerRun() !== undefined) kernel.stop();
    else if (document.querySelector(".cell[data-running]")) stopBeforeStart = true;
  };
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === ".") {
      event.preventDefault();
      requestStop();
    }
  });

  // Hidden setup cells run once, before the first cell of the step.
  let setupDone = null;
  const ensureSetup = () => {
    setupDone ??= (async () => {
      for (const setup of stepData.setup ?? []) {
        const result = await kernel.run(setup.code, { key, cellId: setup.id, internal: true });
        if (!result.ok) console.error(`setup cell ${setup.id} failed`, result.traceback);
      }
    })();
    return setupDone;
  };

  for (const cell of cells) {
    const pre = cell.querySelector(".cell-source");
    const button = cell.querySelector(".run");
    const output = cell.querySelector(".cell-output");
    const cellStatus = cell.querySelector(".cell-status");
    const cellId = cell.dataset.cellId;
    const checkButton = cell.querySelector(".check");
    const stopButton = cell.querySelector(".stop");
    stopButton.addEventListener("click", requestStop);
    const timeLimit = stepData.timeLimits?.[cellId] ?? 30;
    const expected = cell.querySelector(".cell-note") ? cell.dataset.raises : null;
    let view = null;
    const execute = async (withCheck) => {
      if (!isReady || cell.dataset.running) return;
      cell.dataset.running = "1";
      output.replaceChildren();
      cellStatus.classList.remove("solved");
      cellStatus.textContent = "Running…";
      stopButton.disabled = false;
      const started = performance.now();
      performance.mark("pd:run-start");
      stopBeforeStart = false;
      await ensureSetup();
      if (stopBeforeStart) {
        stopBeforeStart = false;
        cellStatus.textContent = "Stopped: you pressed Stop";
        stopButton.disabled = true;
        delete cell.dataset.running;
        return;
      }
      let first = true;
      const onStream = (name, text) => {
        if (first) performance.mark("pd:first-output");
        first = false;
        appendOutput(output, name, text);
      };
      const code = view.state.doc.toString();
      let result = await kernel.run(code, { key, cellId, onStream, timeLimit });
      stopButton.disabled = true;
      if (result.ok) succeeded.push({ id: cellId, code });
      if (first) performance.mark("pd:first-output");
      showResult(output, result);
      const ms = Math.round(performance.now() - started);
      if (withCheck && result.ok) {
        result = await kernel.run(stepData.checks[cellId], { key, cellId: `${cellId}-check` });
        if (result.ok) {
          cellStatus.textContent = "✓ Solved";
          cellStatus.classList.add("solved");
        } else {
          const why = result.error_type === "AssertionError" && result.error_message;
          cellStatus.textContent = why ? `Not yet: ${why}` : `Not yet (${result.error_type})`;
        }
      } else if (result.ok) {
        cellStatus.textContent = `Done in ${ms} ms`;
      } else if (result.stopped) {
        performance.mark("pd:stopped");
        cellStatus.textContent = `Stopped: ${result.stopped}`;
      } else if (result.error_type === "KernelRestarted") {
        cellStatus.textContent = restartNote || "Python was restarted";
      } else if (expected && result.error_type === expected) {
        cellStatus.textContent = `Raised ${expected}, as expected`;
      } else {
        cellStatus.textContent = `Failed (${result.error_type})`;
      }
      delete cell.dataset.running;
    };
    const run = () => execute(false);
    view = createEditor(pre, {
      editable: pre.dataset.editable !== "false",
      onRun: run,
      onRunAndNext: () => {
        run();
        const next = cells[cells.indexOf(cell) + 1];
        next?.querySelector(".cm-content")?.focus();
        next?.scrollIntoView({ block: "nearest" });
      },
      label: `Python code, cell ${cellId}`,
    });
    button.addEventListener("click", run);
    checkButton?.addEventListener("click", () => execute(true));
  }
}

main();
