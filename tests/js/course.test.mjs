// course.js: where the course map's "continue" link leads.
import assert from "node:assert/strict";
import { test } from "node:test";

const { firstUnfinished, stepUrl } = await import("../../static/js/page/course.js");

const lessons = [
  { id: "a", steps: [[1, []], [2, ["ex"]]] },
  { id: "b", steps: [[1, []]] },
];
const none = { visited: [], solved: {} };

test("a learner who has started nothing starts at the first step", () => {
  assert.deepEqual(firstUnfinished(lessons, () => none), { lesson: "a", step: 1, started: false });
});

test("an exercise not solved keeps its step unfinished", () => {
  const progress = { a: { visited: [1, 2], solved: {} }, b: none };
  const next = firstUnfinished(lessons, (id) => progress[id]);
  assert.deepEqual(next, { lesson: "a", step: 2, started: true });
});

test("a finished lesson leads on to the next one", () => {
  const progress = { a: { visited: [1, 2], solved: { 2: ["ex"] } }, b: none };
  assert.deepEqual(firstUnfinished(lessons, (id) => progress[id]), {
    lesson: "b",
    step: 1,
    started: true,
  });
  const all = { ...progress, b: { visited: [1], solved: {} } };
  assert.equal(firstUnfinished(lessons, (id) => all[id]), null);
});

test("step URLs follow the page's pattern, an export's folders included", () => {
  assert.equal(stepUrl("/course/lessons/{lesson}/{step}/", "a", 3), "/course/lessons/a/3/");
});
