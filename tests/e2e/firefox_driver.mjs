// Drives Firefox over WebDriver BiDi with puppeteer-core, for the cross-engine walk
// (tests/e2e/engines.py): one JSON command a line on stdin, one JSON answer a line on stdout.
//   {"cmd": "goto", "url": ...}   {"cmd": "eval", "expression": ...}   {"cmd": "reload"}
//   {"cmd": "newPage"}            {"cmd": "console"}            {"cmd": "close"}
// An expression that gives a promise is awaited. Answers are {"ok": true, "value"} or
// {"ok": false, "error"}. The first line says {"ok": true, "version"} once the browser runs.
import { createInterface } from "node:readline";
import puppeteer from "puppeteer-core";

const executablePath = process.argv[2] ?? "/usr/bin/firefox-esr";
// Milliseconds a navigation or an evaluation may take (above the page's own limit, below the Python side's).
const timeout = Number(process.argv[3] ?? 65) * 1000;
// How many of the last console messages "console" answers (engines.py's CONSOLE_LINES).
const consoleLines = Number(process.argv[4] ?? 40);
const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath,
  headless: true,
  protocolTimeout: timeout,
});
// The last console messages of the page and its workers ("console" answers them): what a page
// that never became ready said, for the walk's message.
const said = [];
const listen = (page) =>
  page.on("console", (message) => {
    said.push(`${message.type()}: ${message.text()}`);
    if (said.length > consoleLines) said.shift();
  });
let page = await browser.newPage();
listen(page);
const say = (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`);
say({ ok: true, version: await browser.version() });

/**
 * Wait until the page is the document its own reload loaded, its DOM read: a page of the export
 * behind a host without headers stops loading and reloads itself once its service worker is in
 * control (templates/_isolation.js), and Firefox (140) reports the navigation it stopped as
 * NS_BINDING_ABORTED, where Chromium and WebKit wait for the reloaded page.
 */
async function reloaded(url) {
  const until = Date.now() + timeout;
  const check = `performance.getEntriesByType("navigation")[0]?.type === "reload"
    && document.readyState !== "loading" && location.href === ${JSON.stringify(url)}`;
  for (;;) {
    try {
      if (await page.evaluate(check)) return null;
    } catch {
      // between the two documents
    }
    if (Date.now() > until) throw new Error(`the page did not reload itself within ${timeout} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Open `url`, its DOM read; through the reload a page asks for itself (`reloaded`). */
async function open(url) {
  try {
    await page.goto(url, { waitUntil: "domcontentloaded", timeout });
    return null;
  } catch (error) {
    if (!String(error?.message).includes("NS_BINDING_ABORTED")) throw error;
    return reloaded(new URL(url).href);
  }
}

const COMMANDS = {
  goto: ({ url }) => open(url),
  reload: () => page.reload({ waitUntil: "domcontentloaded", timeout }).then(() => null),
  eval: ({ expression }) => page.evaluate(expression),
  newPage: async () => {
    await page.close();
    page = await browser.newPage();
    listen(page);
    return null;
  },
  console: () => [...said],
};

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.cmd === "close") break;
  try {
    say({ ok: true, value: (await COMMANDS[command.cmd](command)) ?? null });
  } catch (error) {
    say({ ok: false, error: String(error?.message ?? error) });
  }
}
await browser.close();
