// No run-order trap: running a cell (or moving one of its controls) first runs the step's
// earlier cells it needs that have not run in this Python, each showing its output in its own
// cell, and the cell says so in one quiet line. Which it needs, the server read from the code as
// written (`needs`: promptdojo.course.needs); once the learner edited it or a cell above, all
// those above. A lesson turns it off with `run_earlier_cells: false`
// (lesson.yaml; the step's JSON says `runEarlier`). A NameError for a name an earlier cell, or
// an earlier step, defines says which cell that is (`definitions`: promptdojo.course.definitions).

/**
 * The cells above `cells[index]` (`{id, edited()}`, in order) that its run needs: those `needs`
 * names for it, while it and every cell above are as the lesson wrote them; else, or with no
 * `needs` for it, every cell above.
 */
export function cellsNeeded(cells, index, needs) {
  const above = cells.slice(0, index);
  const mine = needs?.[cells[index].id];
  if (!mine || [cells[index], ...above].some((cell) => cell.edited())) return above;
  return above.filter((cell) => mine.includes(cell.id));
}

/**
 * Run `earlier` (the cells above, `{id, execute}` in order) that have not run in this Python, as
 * `step.hasRun` knows, stopping at the first that fails (unless it raised what it expects).
 * A cell whose run is in flight is waited for. Resolves with the ids it ran.
 */
export async function runEarlierFirst(earlier, step) {
  const ran = [];
  for (const cell of earlier) {
    if (step.hasRun(cell.id)) continue;
    if (cell.execute.inflight) {
      await cell.execute.inflight.catch(() => null);
      continue;
    }
    const result = await cell.execute();
    ran.push(cell.id);
    if (!result || (!result.ok && !result.expected)) break;
  }
  return ran;
}

/**
 * The quiet line just above a cell's `output` saying which cells above ran first (`ids`), or
 * none (empty `ids`). It stays out of the output, which is the cell's own.
 */
export function showOrderNote(output, ids) {
  let note = output.previousElementSibling;
  if (!note?.classList.contains("order-note")) {
    if (!ids.length) return;
    note = document.createElement("p");
    note.className = "order-note";
    output.before(note);
  }
  const names = ids.map((id) => `“${id}”`).join(", ");
  const cells = ids.length === 1 ? "the cell above" : `${ids.length} cells above`;
  note.hidden = !ids.length;
  note.textContent = ids.length ? `Ran ${cells} first (${names}): not yet run in this Python.` : "";
}

/** The name a NameError's message says is not defined, or null. */
export function undefinedName(result) {
  if (result?.error_type !== "NameError") return null;
  // \x27 is the quote mark: tests/js/functions.test.mjs reads a quote in a regex as a string.
  return /name \x27([^\x27]+)\x27 is not defined/.exec(result.error_message ?? "")?.[1] ?? null;
}

/**
 * What to tell a learner whose cell `cellId` of step `stepNumber` raised `result`: which cell
 * defines the missing name, from `definitions` (name → `{cell, step, title}`), or null.
 */
export function nameErrorHint(result, definitions, cellId, stepNumber) {
  const name = undefinedName(result);
  const where = name && Object.hasOwn(definitions ?? {}, name) ? definitions[name] : null;
  if (!where || (where.cell === cellId && where.step === stepNumber)) return null;
  if (where.step === stepNumber) {
    return `“${name}” is defined by this step's cell “${where.cell}”: run it first.`;
  }
  return (
    `“${name}” is defined in step ${where.step} (“${where.title}”), cell “${where.cell}”: ` +
    "each step has its own Python namespace, so define or import it in this step too."
  );
}

/** Add the hint of `nameErrorHint` below a cell's error, if there is one. */
export function showNameErrorHint(output, result, data, cellId) {
  const hint = nameErrorHint(result, data.definitions, cellId, data.step);
  if (!hint) return;
  const note = document.createElement("p");
  note.className = "name-hint";
  note.textContent = hint;
  output.append(note);
}
