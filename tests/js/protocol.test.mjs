// The boot message names the step the page opened (its imports come first: worker.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { BOOT_NAME, bootFromName, pageStep } from "../../static/js/shared/protocol.js";

test("the step comes from the page's path, served or exported", () => {
  assert.equal(pageStep("/lessons/decoding/4"), 4);
  assert.equal(pageStep("/course/lessons/decoding/12/"), 12);
  assert.equal(pageStep("/course/lessons/decoding/3/index.html"), 3);
  assert.equal(pageStep("/"), null);
  assert.equal(pageStep("/lessons/decoding"), null);
});

test("a kernel worker's name carries its boot message, as the inline script writes it", async () => {
  const { readFile } = await import("node:fs/promises");
  const script = await readFile(new URL("../../templates/_isolation.js", import.meta.url), "utf8");
  // The inline script cannot import protocol.js: it writes the prefix itself.
  assert.ok(script.includes(`\`${BOOT_NAME}\${JSON.stringify(boot)}\``), "the inline script's name");
  const config = { workerUrl: "/assets/worker.js", imports: { 1: ["numpy"] } };
  assert.deepEqual(bootFromName(`${BOOT_NAME}${JSON.stringify({ config, step: 3 })}`), {
    config,
    step: 3,
  });
  assert.deepEqual(bootFromName(`${BOOT_NAME}${JSON.stringify({ config })}`), { config, step: null });
});

test("a worker named otherwise, or with a damaged name, waits for its boot message", () => {
  for (const name of ["", "promptdojo-kernel", "promptdojo download: snapshot", undefined]) {
    assert.equal(bootFromName(name), null, String(name));
  }
  assert.equal(bootFromName(`${BOOT_NAME}{not json`), null);
  assert.equal(bootFromName(`${BOOT_NAME}{"step": 1}`), null);
  assert.equal(bootFromName(`${BOOT_NAME}{"config": "x"}`), null);
});
