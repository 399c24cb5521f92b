"""A control change until its cell's new output, for a light cell, in Chromium.

    python bench/controls.py [--changes 30]

Serves the fixture lesson ``knobs``, opens its step 1 and runs the light cell ``temp`` once
(a slider, a choice, a toggle and one ``print``). Then, for each change, the page itself takes
the time: it moves the temperature slider one step (the same ``input`` event a key press
fires) and stops the clock when the cell's output shows the new value. The figure includes the
debounce (``LIVE_DEBOUNCE_MS`` in ``static/js/page/controls.js``), the trip to the worker and back,
and drawing the output; it is the median over the changes (goal: <= 100 ms).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from bench._common import ROOT, save
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server, wait_ready

LESSONS = ROOT / "tests" / "fixtures" / "lessons"

#: In the page: move the slider to `value`, resolve with the ms until the output shows it.
ONE_CHANGE = """(value) => new Promise((resolve) => {
  const cell = document.querySelector("#cell-temp");
  const slider = cell.querySelector('input[name="temperature"]');
  const output = cell.querySelector(".cell-output");
  const want = `T=${Number(value).toFixed(2)} model=small`;
  const started = performance.now();
  const observer = new MutationObserver(() => {
    if (output.querySelector("pre.stdout")?.textContent.includes(want)) {
      observer.disconnect();
      resolve(performance.now() - started);
    }
  });
  observer.observe(output, { childList: true, subtree: true, characterData: true });
  slider.value = value;
  slider.dispatchEvent(new Event("input", { bubbles: true }));
})"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(LESSONS, Path(tmp))
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                page = browser.new_page()
                page.goto(f"{server.url}/lessons/knobs/1")
                wait_ready(page)
                page.locator("#cell-temp").get_by_role("button", name="Run", exact=True).click()
                page.locator("#cell-temp pre.stdout").wait_for()
                times = []
                for i in range(args.changes):
                    value = round(0.05 * (i % 20 + 1), 2) if i % 20 != 19 else 0.0
                    times.append(page.evaluate(ONE_CHANGE, value))
                    page.wait_for_timeout(100)  # let the run end: each change stands alone
                browser.close()
        finally:
            stop_server(server)
    figures = {
        "changes": args.changes,
        "control_to_output_ms": round(statistics.median(times), 1),
        "control_to_output_p90_ms": round(sorted(times)[int(0.9 * (len(times) - 1))], 1),
        "control_to_output_runs_ms": [round(t, 1) for t in times],
    }
    save("controls", figures, f"python bench/controls.py --changes {args.changes}")


if __name__ == "__main__":
    main()
