// The boot message names the step the page opened (its imports come first: worker.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { pageStep } from "../../static/js/protocol.js";

test("the step comes from the page's path, served or exported", () => {
  assert.equal(pageStep("/lessons/decoding/4"), 4);
  assert.equal(pageStep("/course/lessons/decoding/12/"), 12);
  assert.equal(pageStep("/course/lessons/decoding/3/index.html"), 3);
  assert.equal(pageStep("/"), null);
  assert.equal(pageStep("/lessons/decoding"), null);
});
