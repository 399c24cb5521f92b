// The course map's rules, without the DOM: where "continue" leads.
import { stepsDone } from "./store.js";

/**
 * The first step not done, in course order. `lessons` is `[{id, steps}]` (steps as the index
 * gives them: `[[number, [exercise ids]], ...]`), `progressOf(id)` a lesson's stored progress.
 * Returns `{lesson, step, started}` (`started`: the learner has visited any step), or `null`
 * when every step of every lesson is done.
 */
export function firstUnfinished(lessons, progressOf) {
  let started = false;
  for (const { id, steps } of lessons) {
    const progress = progressOf(id);
    if (progress.visited.length) started = true;
    const done = stepsDone(progress, steps);
    const next = steps.find(([number]) => !done.has(String(number)));
    if (next) return { lesson: id, step: Number(next[0]), started };
  }
  return null;
}

/** A step's URL from the page's pattern, `…/lessons/{lesson}/{step}` (a folder in an export). */
export function stepUrl(pattern, lesson, step) {
  return pattern.replace("{lesson}", lesson).replace("{step}", String(step));
}
