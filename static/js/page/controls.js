// A cell's controls (promptdojo.ui's slider, choice and toggle): native labelled inputs under
// its editor, in call order, and the live re-run when one moves.
//
// The page learns a cell's controls from the kernel's result (`result.controls`: what the cell
// declared, each with the value it ran with). The learner's values are kept by name, saved with
// their edits, and sent with every run; Python checks them (promptdojo.kernel, promptdojo.ui).

/** Wait this long after the last change before re-running: a held arrow key runs once. */
export const LIVE_DEBOUNCE_MS = 40;

/** Digits a slider shows: as many as its step has. */
function decimals(step) {
  const text = String(step);
  return text.includes("e-") ? Number(text.split("e-")[1]) : (text.split(".")[1] ?? "").length;
}

/** A list control's items (a choice's options, a slider's `values`): the input holds an index. */
const listed = (spec) => spec.choices ?? spec.values;

/** The value an input holds, as the type its control returns (a number stays a number). */
function inputValue(spec, input) {
  if (spec.kind === "toggle") return input.checked;
  if (listed(spec)) return listed(spec)[Number(input.value)];
  return Number(Number(input.value).toFixed(decimals(spec.step)));
}

function shownValue(spec, value) {
  if (spec.kind === "slider" && !spec.values) return Number(value).toFixed(decimals(spec.step));
  if (spec.kind === "toggle") return value ? "on" : "off";
  return String(value);
}

/** What identifies a list of controls, whatever the order of each one's keys; not the values. */
function signature(list) {
  return JSON.stringify(
    list.map(({ value, ...spec }) => Object.fromEntries(Object.entries(spec).sort())),
  );
}

/** One control: its label, its native input and (for a slider) the value it shows. */
function controlElement(spec, id, value, onInput) {
  const row = document.createElement("div");
  row.className = `control control-${spec.kind}`;
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = spec.name;
  let input;
  const index = listed(spec) ? Math.max(0, listed(spec).indexOf(value)) : null;
  if (spec.kind === "choice") {
    input = document.createElement("select");
    spec.choices.forEach((option, i) => input.append(new Option(String(option), String(i))));
    input.value = String(index);
  } else {
    input = document.createElement("input");
    input.type = spec.kind === "toggle" ? "checkbox" : "range";
    if (spec.kind === "toggle") input.checked = value;
    else if (spec.values) Object.assign(input, { min: 0, max: spec.values.length - 1, step: 1 });
    else Object.assign(input, { min: spec.min, max: spec.max, step: spec.step, value });
    if (spec.values) input.value = String(index);
  }
  input.id = id;
  input.name = spec.name;
  const shown = document.createElement("output");
  shown.htmlFor = id;
  shown.className = "control-value";
  const show = () => {
    shown.textContent = shownValue(spec, inputValue(spec, input));
    if (spec.kind === "slider") input.setAttribute("aria-valuetext", shown.textContent);
  };
  show();
  input.addEventListener(spec.kind === "slider" ? "input" : "change", () => {
    show();
    onInput(spec, inputValue(spec, input));
  });
  if (spec.kind === "toggle") row.append(input, label, shown);
  else row.append(label, input, shown);
  return { row, input, show };
}

/**
 * The controls of the cell `section`. `values` are the learner's saved values by name; `save`
 * stores them, `changed` is called after every change (the live re-run). Returns
 * `{ values(), render(declared), reset(), noteLater() }`.
 */
export function mountControls(section, { values, save, changed, hasLater }) {
  let chosen = { ...values };
  let specs = [];
  let inputs = [];
  const box = document.createElement("div");
  box.className = "cell-controls";
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", `Controls of cell ${section.dataset.cellId}`);
  box.hidden = true;
  const list = document.createElement("div");
  list.className = "control-list";
  const note = document.createElement("p");
  note.className = "controls-note";
  note.hidden = true;
  note.textContent = "Later cells use the old value: run them to update.";
  box.append(list, note);
  section.querySelector(".cell-toolbar").before(box);
  const onInput = (spec, value) => {
    if (value === spec.default) delete chosen[spec.name];
    else chosen[spec.name] = value;
    save(chosen);
    changed(spec, value);
  };
  const build = (declared) => {
    specs = declared.map(({ value, ...spec }) => spec);
    const prefix = `control-${section.dataset.cellId}`;
    inputs = declared.map((spec, i) => controlElement(spec, `${prefix}-${i}`, spec.value, onInput));
    list.replaceChildren(...inputs.map(({ row }) => row));
    box.hidden = declared.length === 0;
  };
  return {
    values: () => ({ ...chosen }),
    /** Draw the controls the author's code declares, before the cell runs, at saved values. */
    preview(declared) {
      if (!declared?.length) return;
      build(declared.map((spec) => ({ ...spec, value: chosen[spec.name] ?? spec.default })));
    },
    /**
     * Show the controls a run declared; keep the inputs (and focus) when they are the same.
     * Values of controls the cell no longer makes are dropped; after `refused` (a ControlError),
     * every control is put back to the value it ran with, which for the refused one is its default.
     */
    render(declared, refused = false) {
      const same = signature(declared) === signature(specs);
      if (!same) build(declared);
      const names = new Set(declared.map((spec) => spec.name));
      if (refused) {
        declared.forEach((spec, i) => {
          if (spec.value === spec.default) delete chosen[spec.name];
          else chosen[spec.name] = spec.value;
          if (spec.kind === "toggle") inputs[i].input.checked = spec.value;
          else if (listed(spec)) inputs[i].input.value = String(listed(spec).indexOf(spec.value));
          else inputs[i].input.value = spec.value;
          inputs[i].show();
        });
      } else {
        for (const name of Object.keys(chosen)) if (!names.has(name)) delete chosen[name];
      }
      save(chosen);
    },
    /** Put back `values` (an earlier `values()`), as after undoing a Reset. */
    restore(values) {
      chosen = { ...values };
      save(chosen);
      const at = (spec) => ({ ...spec, value: chosen[spec.name] ?? spec.default });
      if (specs.length) build(specs.map(at));
    },
    /** Put every control back to the author's default. */
    reset() {
      chosen = {};
      save(chosen);
      if (specs.length) build(specs.map((spec) => ({ ...spec, value: spec.default })));
      note.hidden = true;
    },
    /** Say that later cells still hold the value of the previous run. */
    noteLater() {
      note.hidden = !hasLater;
    },
  };
}

/**
 * The live re-run of one cell: `request()` after each change runs the cell once the changes
 * pause; a run in flight is interrupted first, so only the newest values run and nothing queues.
 * `execute()` runs the cell with the current values; `inflight()` is the running run's promise.
 * `request.cancel()` drops the re-run still due (an explicit Run or Check reads the same values,
 * and a late re-run would interrupt it).
 */
export function liveRunner({ execute, inflight, interrupt, delay = LIVE_DEBOUNCE_MS }) {
  let timer = null;
  let waiting = false;
  let generation = 0;
  const go = async () => {
    timer = null;
    const mine = generation;
    const busy = inflight();
    if (busy) {
      if (waiting) return; // a run is already due once this one stops: it reads the newest values
      waiting = true;
      interrupt();
      await busy.catch(() => null); // a run that failed still ends the wait
      waiting = false;
    }
    if (mine === generation) await execute();
  };
  const request = () => {
    clearTimeout(timer);
    timer = setTimeout(go, delay);
  };
  request.cancel = () => {
    clearTimeout(timer);
    timer = null;
    generation += 1;
  };
  return request;
}
