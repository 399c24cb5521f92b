// Page entry for a lesson step: editors for every cell, one kernel worker, Run buttons.
import { createEditor } from "./editor.js";
import { KernelClient } from "./kernel.js";

const PHASE_TEXT = {
  downloading: "Python: downloading…",
  starting: "Python: starting…",
  "python-ready": "Python: loading the lesson library…",
  packages: "Python: loading packages…",
  ready: "Python: ready",
  error: "Python failed to start",
};

function appendOutput(output, className, text) {
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
    const plain = result.value?.["text/plain"];
    if (plain !== undefined) appendOutput(output, "value", plain);
  } else {
    appendOutput(output, "error", result.traceback || `${result.error_type}: ${result.error_message}`);
  }
}

function main() {
  const config = JSON.parse(document.body.dataset.kernel);
  const status = document.querySelector(".kernel-status");
  const cells = [...document.querySelectorAll(".cell")];
  const key = `${config.lesson}/${config.step}`;
  let isReady = false;

  const kernel = new KernelClient(config, (phase, detail) => {
    status.dataset.phase = phase;
    let text = PHASE_TEXT[phase] ?? `Python: ${phase}`;
    if (phase === "error") text += `: ${detail.message}`;
    if (phase === "ready" && detail.missing?.length) {
      text += ` (without ${detail.missing.join(", ")}: not in the package cache)`;
    }
    status.textContent = text;
    if (phase === "ready") {
      isReady = true;
      for (const button of document.querySelectorAll(".cell .run")) button.disabled = false;
    }
  });

  for (const cell of cells) {
    const pre = cell.querySelector(".cell-source");
    const button = cell.querySelector(".run");
    const output = cell.querySelector(".cell-output");
    const cellStatus = cell.querySelector(".cell-status");
    const cellId = cell.dataset.cellId;
    let view = null;
    const run = async () => {
      if (!isReady || button.dataset.running) return;
      button.dataset.running = "1";
      output.replaceChildren();
      cellStatus.textContent = "Running…";
      const started = performance.now();
      const result = await kernel.run(view.state.doc.toString(), {
        key,
        cellId,
        onStream: (name, text) => appendOutput(output, name, text),
      });
      showResult(output, result);
      const ms = Math.round(performance.now() - started);
      cellStatus.textContent = result.ok ? `Done in ${ms} ms` : `Failed (${result.error_type})`;
      delete button.dataset.running;
    };
    view = createEditor(pre, {
      editable: pre.dataset.editable !== "false",
      onRun: run,
      label: `Python code, cell ${cellId}`,
    });
    button.addEventListener("click", run);
  }
}

main();
