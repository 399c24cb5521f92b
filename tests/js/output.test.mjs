// output.js: learner output is untrusted, and a value shows by the one rule the server sends.
import assert from "node:assert/strict";
import { before, test } from "node:test";
import { FakeElement, installDocument } from "./fake_dom.mjs";

installDocument();
const output = await import("../../static/js/page/output.js");
const CONFIG = { outputOrder: ["text/html", "image/svg+xml", "text/plain"], htmlFrameHead: "<h>" };

before(installDocument);

test("the first representation in the server's order shows", () => {
  const order = CONFIG.outputOrder;
  assert.equal(output.shownAs({ "text/plain": "1", "text/html": "<b>1</b>" }, order), "text/html");
  assert.equal(output.shownAs({ "text/plain": "1", "image/svg+xml": "<svg/>" }, order), "image/svg+xml");
  assert.equal(output.shownAs({ "text/plain": "" }, order), "text/plain");
  assert.equal(output.shownAs({}, order), undefined);
});

test("HTML goes into a frame that runs no script", () => {
  const box = new FakeElement("output");
  output.showResult(box, { ok: true, value: { "text/html": "<script>x()</script>", "text/plain": "t" } }, CONFIG);
  const [frame] = box.children;
  assert.equal(frame.tagName, "IFRAME");
  assert.equal(frame.getAttribute("sandbox"), "allow-same-origin");
  assert.ok(!frame.getAttribute("sandbox").includes("allow-scripts"));
  assert.equal(frame.srcdoc, "<h><script>x()</script>");
  assert.equal(frame.title, "t");
});

test("SVG becomes an image, encoded into its data URL", () => {
  const box = new FakeElement("output");
  const svg = '<svg onload="x()"><text>&</text></svg>';
  output.showResult(box, { ok: true, value: { "image/svg+xml": svg } }, CONFIG);
  const [img] = box.children;
  assert.equal(img.tagName, "IMG");
  assert.equal(img.src, `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`);
  assert.equal(img.alt, "picture");
});

test("a picture's words give its alt text and a hidden table of its data", () => {
  const box = new FakeElement("output");
  const mime = "application/vnd.promptdojo.figure+json";
  const words = {
    title: "Perplexity",
    summary: "Bar chart of 2 labels.",
    columns: ["label", "value"],
    rows: [["Q8_0", "4.1"], ["<b>", "5.3"]],
  };
  const value = { "image/svg+xml": "<svg/>", "text/plain": "t", [mime]: JSON.stringify(words) };
  output.showResult(box, { ok: true, value }, { ...CONFIG, figureMime: mime });
  const [img, table] = box.children;
  assert.equal(img.alt, "Perplexity. Bar chart of 2 labels.");
  assert.equal(table.tagName, "TABLE");
  assert.equal(table.className, "figure-data visually-hidden");
  const [caption, head, body] = table.children;
  assert.equal(caption.textContent, "Data of the picture: Perplexity");
  assert.deepEqual(
    head.children[0].children.map((th) => [th.tagName, th.getAttribute("scope"), th.textContent]),
    [["TH", "col", "label"], ["TH", "col", "value"]],
  );
  const rows = body.children.map((tr) => tr.children.map((c) => [c.tagName, c.textContent]));
  assert.deepEqual(rows[1], [["TH", "<b>"], ["TD", "5.3"]]); // text, never markup
  // Words that do not parse: the plain repr is the alt text, and no table.
  const bad = new FakeElement("output");
  const broken = { "image/svg+xml": "<svg/>", "text/plain": "t", [mime]: "{" };
  output.showResult(bad, { ok: true, value: broken }, { ...CONFIG, figureMime: mime });
  assert.equal(bad.children.length, 1);
  assert.equal(bad.children[0].alt, "t");
});

test("text goes in as text, and streams of one kind join one block", () => {
  const box = new FakeElement("output");
  output.appendOutput(box, "stdout", "<b>a</b>");
  output.appendOutput(box, "stdout", "b");
  output.appendOutput(box, "stderr", "c");
  assert.deepEqual(
    box.children.map((c) => [c.tagName, c.className, c.textContent]),
    [
      ["PRE", "stdout", "<b>a</b>b"],
      ["PRE", "stderr", "c"],
    ],
  );
});

test("an error shows its traceback, and the truncation marker says the cap", () => {
  const box = new FakeElement("output");
  output.showResult(box, { ok: false, error_type: "E", error_message: "m", traceback: "" }, CONFIG);
  output.appendOutput(box, "truncated", "100000");
  assert.equal(box.children[0].textContent, "E: m");
  assert.match(box.children[1].textContent, /at most 100,000 characters/);
});

test("a failed setup shows first in the cell's output, before the cell's own error", () => {
  const box = new FakeElement("output");
  output.showResult(box, { ok: false, error_type: "NameError", error_message: "x", traceback: "NameError: x\n" }, CONFIG);
  output.showSetupFailures(box, [{ cellId: "imports", text: "setup (hidden cell “imports”) failed:\nModuleNotFoundError: numpy is not available" }]);
  assert.deepEqual(
    box.children.map((c) => [c.className, c.textContent]),
    [
      ["error setup-error", "setup (hidden cell “imports”) failed:\nModuleNotFoundError: numpy is not available\n"],
      ["error", "NameError: x\n"],
    ],
  );
});
