// store.js: what the learner keeps in this browser, and how an import merges with it.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { FakeStorage } from "./fake_dom.mjs";

const store = await import("../../static/js/page/store.js");

beforeEach(() => {
  globalThis.localStorage = new FakeStorage();
});

test("an edit equal to the starter is no edit", () => {
  assert.equal(store.saveEdit("l", 1, "c", "x = 1", "x = 1", "h"), true);
  assert.equal(store.loadEdit("l", 1, "c"), null);
  store.saveEdit("l", 1, "c", "x = 2", "x = 1", "h");
  assert.deepEqual(store.loadEdit("l", 1, "c"), { code: "x = 2", starter: "h" });
});

test("a refused write reports false and keeps nothing", () => {
  globalThis.localStorage.setItem = () => {
    throw new Error("QuotaExceededError");
  };
  assert.equal(store.saveEdit("l", 1, "c", "x = 2", "x = 1", "h"), false);
});

test("progress records visits and solved exercises once each", () => {
  store.markVisited("l", 1);
  store.markVisited("l", 1);
  store.markSolved("l", 1, "ex");
  const progress = store.markSolved("l", 1, "ex");
  assert.deepEqual(progress, { visited: [1], solved: { 1: ["ex"] } });
});

test("a step is done when visited with every exercise solved", () => {
  const progress = { visited: [1, 2], solved: { 2: ["a"], 3: ["b"] } };
  const steps = [
    ["1", []],
    ["2", ["a", "b"]],
    ["3", ["b"]],
  ];
  assert.deepEqual(store.stepsDone(progress, steps), new Set(["1"]));
  progress.solved[2].push("b");
  assert.deepEqual(store.stepsDone(progress, steps), new Set(["1", "2"]));
});

test("an import merges progress, never forgetting what is solved, and its edits win", () => {
  store.markVisited("l", 1);
  store.markSolved("l", 1, "mine");
  store.saveEdit("l", 1, "c", "mine = 1", "", "h");
  const file = {
    format: store.EXPORT_FORMAT,
    version: 1,
    items: {
      "progress:l": { visited: [2], solved: { 1: ["theirs"], 2: ["x"] } },
      "edit:l:1:c": { code: "theirs = 1", starter: "h" },
      "other:key": { code: "ignored" },
    },
  };
  assert.deepEqual(store.importWork(JSON.stringify(file)), { edits: 1 });
  const progress = store.loadProgress("l");
  assert.deepEqual(progress.visited.sort(), [1, 2]);
  assert.deepEqual(progress.solved, { 1: ["mine", "theirs"], 2: ["x"] });
  assert.equal(store.loadEdit("l", 1, "c").code, "theirs = 1");
  assert.equal(localStorage.getItem("promptdojo:v1:other:key"), null);
});

test("an export holds exactly our keys and reads back", () => {
  store.saveEdit("l", 1, "c", "x = 2", "x = 1", "h");
  localStorage.setItem("someone-else", "1");
  const work = store.exportWork();
  assert.equal(work.format, store.EXPORT_FORMAT);
  assert.deepEqual(Object.keys(work.items), ["edit:l:1:c"]);
  globalThis.localStorage = new FakeStorage();
  assert.deepEqual(store.importWork(JSON.stringify(work)), { edits: 1 });
});

test("a file that is not an export is refused and nothing is written", () => {
  assert.throws(() => store.importWork("{"), /this file is not JSON/);
  assert.throws(() => store.importWork('{"format": "x", "version": 1, "items": {}}'), /not made/);
  assert.equal(localStorage.length, 0);
});

test("an exercise's help is saved, and an import never closes what was opened", () => {
  assert.deepEqual(store.loadHelp("l", 1, "ex"), { hints: 0, failed: false, solution: false });
  store.saveHelp("l", 1, "ex", { hints: 2, failed: false, solution: false });
  const file = {
    format: "promptdojo-work",
    version: 1,
    items: { "help:l:1:ex": { hints: 1, failed: true, solution: false, extra: "<script>" } },
  };
  store.importWork(JSON.stringify(file));
  assert.deepEqual(store.loadHelp("l", 1, "ex"), { hints: 2, failed: true, solution: false });
  assert.deepEqual(store.exportWork().items["help:l:1:ex"], {
    hints: 2,
    failed: true,
    solution: false,
  });
});
