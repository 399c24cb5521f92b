// An exercise's help, given in order: hint 2 opens once hint 1 is open, and the solution once
// every hint is, or, after a failed Check, with "Show the solution anyway". How far the learner
// went is saved with their edits (store.js), so it survives a reload and Export/Import.
import { loadHelp, saveHelp } from "./store.js";

/**
 * Gate the hints and the solution of the exercise `section` (a `.cell.exercise`).
 * Returns `{ checkFailed() }`, for the cell's Check to call when the learner's code fails it.
 */
export function mountHelp(section, { lesson, step }) {
  const box = section.querySelector(".exercise-help");
  if (!box) return { checkFailed() {} };
  const cellId = section.dataset.cellId;
  const hints = [...box.querySelectorAll("details.hint")];
  const solution = box.querySelector("details.solution");
  const anyway = box.querySelector(".solution-anyway");
  let help = loadHelp(lesson, step, cellId);
  const show = () => {
    hints.forEach((hint, index) => {
      hint.hidden = index > help.hints;
      if (index < help.hints) hint.open = true;
    });
    const unlocked = help.solution || help.hints >= hints.length;
    if (solution) solution.hidden = !unlocked;
    if (solution && help.solution) solution.open = true;
    if (anyway) anyway.hidden = unlocked || !help.failed;
  };
  const update = (change) => {
    help = { ...help, ...change };
    saveHelp(lesson, step, cellId, help);
    show();
  };
  hints.forEach((hint, index) => {
    hint.addEventListener("toggle", () => {
      if (hint.open && index >= help.hints) update({ hints: index + 1 });
    });
  });
  solution?.addEventListener("toggle", () => {
    if (solution.open && !help.solution) update({ solution: true });
  });
  anyway?.addEventListener("click", () => {
    update({ solution: true });
    solution?.querySelector("summary")?.focus();
  });
  show();
  return {
    checkFailed() {
      if (!help.failed) update({ failed: true });
    },
  };
}
