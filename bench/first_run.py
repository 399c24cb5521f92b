"""Every lesson cell's FIRST run on a freshly loaded step page, beside the warm median.

    python bench/first_run.py [--engine chromium] [--out first_run]

A real uvicorn serves the lessons with Pyodide 0.29.0 and its official numpy (``--pyodide-dir``).
For each visible cell of each step, a new browser context (empty caches) opens the step, waits
for "ready", and presses the cell's button (Run; Check for an exercise) once. If the cell then
fails on a name an earlier cell defines, a second fresh page runs the step's earlier cells first
(set-up, untimed) and then the cell. Two times per cell:

* ``done_ms``: the page's own "Done in N ms" (the learner's wait from the click, the step's
  hidden set-up cells included); for an exercise, whose status is a verdict, the worker's time
  in the cell, its check and the set-up cells;
* ``worker_ms``: the worker's time in Python for the cell (the kernel result's ``ms``);
* ``setup_ms``: the worker's time in the step's hidden set-up cells, and in the cells above it
  that the press ran first (``ran_first``: those it needs that had not run, order.js).

The warm median beside it is ``bench/lesson_cells.py``'s (repeated runs, after the wasm warmed
up), read from its latest result. Step 1 also gives "ready → first output": its first cell
(numpy and ``promptdojo.decoding`` imported) pressed by the page itself the moment it is ready,
from the ``pd:ready`` mark and from the click (``pd:run-start``) to ``pd:first-output``.

The engine is a parameter; Chromium is Debian's (/usr/bin/chromium). One browser is shared, each
page gets a fresh context. Times depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import expect, sync_playwright

from bench._common import RESULTS, ROOT, save
from bench.browser import mark, wait_mark
from promptdojo.course import discover, load_lesson
from promptdojo.course.model import CellKind, Lesson, Step
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server, wait_ready
from tests.e2e.walk import _RECORD_RUNS, kernel_runs
from tests.support.numpy_release import build

#: Goal (issue: the first run): every cell's first run on a fresh page within 2 s in Chromium.
FIRST_RUN_GOAL_MS = 2000
CELL_TIMEOUT_MS = 120_000


def launch(playwright, engine: str):
    """The browser for ``engine``; Chromium is the system's, the others Playwright's own."""
    kind = getattr(playwright, engine)
    if engine == "chromium":
        return kind.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    return kind.launch(headless=True)


def press(page, lesson: Lesson, step: Step, cell_id: str) -> dict:
    """Press the cell's button once; its status text, error text and worker milliseconds."""
    cell = next(c for c in step.cells if c.id == cell_id)
    section = page.locator(f"#cell-{cell_id}")
    button = "Check" if cell.kind is CellKind.EXERCISE and step.exercise(cell_id) else "Run"
    before = len(kernel_runs(page))
    section.get_by_role("button", name=button, exact=True).press("Enter")
    status = section.locator(".cell-status")
    expect(status).not_to_have_text("Running…", timeout=CELL_TIMEOUT_MS)
    expect(status).not_to_have_text("", timeout=5000)
    runs = kernel_runs(page)[before:]
    ours = [r["cellId"].removesuffix("-check") == cell_id for r in runs]
    visible = {c.id for c in step.cells} - {cell_id}
    worker = sum(r["ms"] or 0 for r, mine in zip(runs, ours, strict=True) if mine)
    others = sum(r["ms"] or 0 for r, mine in zip(runs, ours, strict=True) if not mine)
    error = section.locator(".cell-output pre.error")
    return {
        "status": status.inner_text(),
        "error": error.first.inner_text() if error.count() else "",
        "worker_ms": round(worker, 1),
        "setup_ms": round(others, 1),
        # The cells above it that this press ran first (order.js), in the order they ran.
        "ran_first": [r["cellId"] for r in runs if r["cellId"] in visible],
    }


def fresh_step(browser, url: str):
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    wait_ready(page)
    page.evaluate(_RECORD_RUNS)
    return context, page


def first_run(browser, base: str, lesson: Lesson, step: Step, index: int) -> dict:
    """The first press of the step's cell ``index`` on a fresh page (earlier cells if needed)."""
    cell = step.cells[index]
    url = f"{base}/lessons/{lesson.id}/{step.number}"
    for setup in (False, True):
        context, page = fresh_step(browser, url)
        try:
            if setup:
                for earlier in step.cells[:index]:
                    press(page, lesson, step, earlier.id)
            result = press(page, lesson, step, cell.id)
        finally:
            context.close()
        needs_earlier = "NameError" in result["error"] + result["status"]
        if cell.raises or not needs_earlier or setup:
            break
    done = re.search(r"Done in ([\d,]+) ms", result["status"])
    return {
        "cell": f"{lesson.id}/{step.number}/{cell.id}",
        "done_ms": (
            int(done.group(1).replace(",", ""))
            if done
            else round(result["worker_ms"] + result["setup_ms"], 1)
        ),
        "worker_ms": result["worker_ms"],
        "setup_ms": result["setup_ms"],
        "ran_first": result["ran_first"],
        "with_earlier_cells": setup,
        "status": result["status"],
    }


#: Installed as soon as the page has loaded: the page itself presses the first cell's Run the
#: moment the kernel is ready (after the page's own "ready" listeners), as a learner waiting with
#: the mouse over it would, without the harness's own reaction time.
_PRESS_AT_READY = """() => {
  const press = (kernel) => kernel.addPhaseListener((phase) => {
    if (phase === "ready") setTimeout(() => document.querySelector(".cell button.run").click(), 0);
  });
  const kernel = () => press(window.promptdojoKernel);
  if (window.promptdojoKernel) kernel();
  else window.addEventListener("promptdojo:kernel", kernel, {once: true});
}"""


def ready_to_output(browser, base: str, lesson: Lesson) -> dict:
    """Step 1's first cell pressed at "ready": milliseconds to its first output."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{base}/lessons/{lesson.id}/1", wait_until="domcontentloaded")
        page.evaluate(_PRESS_AT_READY)
        output = wait_mark(page, "pd:first-output")
        return {
            "cell": f"{lesson.id}/1/{lesson.steps[0].cells[0].id}",
            "click_to_output_ms": round(output - mark(page, "pd:run-start")),
            "ready_to_output_ms": round(output - mark(page, "pd:ready")),
        }
    finally:
        context.close()


def warm_medians() -> dict[str, float]:
    path = RESULTS / "lesson_cells.json"
    if not path.is_file():
        return {}
    return {c["cell"]: c["browser_ms"] for c in json.loads(path.read_text())["figures"]["per_cell"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="chromium", choices=["chromium", "firefox", "webkit"])
    parser.add_argument("--out", default="first_run", help="result file name (for a baseline)")
    parser.add_argument("--only", default="", help="only cells whose key starts so, e.g. lesson/7/")
    args = parser.parse_args()
    lessons = [load_lesson(folder) for folder in discover(ROOT / "lessons")]
    release = build()
    warm = warm_medians()
    cells: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        server = start_server(
            ROOT / "lessons", Path(tmp), "--pyodide-dir", str(release.path), "--offline"
        )
        try:
            browser = launch(playwright, args.engine)
            first_output = ready_to_output(browser, server.url, lessons[0])
            for lesson in lessons:
                for step in lesson.steps:
                    for index, cell in enumerate(step.cells):
                        if not f"{lesson.id}/{step.number}/{cell.id}".startswith(args.only):
                            continue
                        row = first_run(browser, server.url, lesson, step, index)
                        row["warm_ms"] = warm.get(row["cell"])
                        print(f"{row['cell']}: {row['done_ms']} ms", file=sys.stderr)
                        cells.append(row)
            browser.close()
        finally:
            stop_server(server)
    cells.sort(key=lambda c: -c["done_ms"])
    figures = {
        args.engine: {
            "pyodide": release.version,
            "cells": len(cells),
            "slowest_cell": cells[0]["cell"],
            "slowest_first_run_ms": cells[0]["done_ms"],
            "cells_over_goal": sum(c["done_ms"] > FIRST_RUN_GOAL_MS for c in cells),
            "first_output": first_output,
            "per_cell": cells,
        }
    }
    save(args.out, figures, f"python bench/first_run.py --engine {args.engine}")


if __name__ == "__main__":
    main()
