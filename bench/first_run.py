"""Every lesson cell's FIRST run on a freshly loaded step page, beside the warm median, per engine.

    python bench/first_run.py [--engine chromium|firefox|webkit|webkit-no-sab] [--out NAME]

A real uvicorn serves the lessons with Pyodide 0.29.0 and its official numpy (``--pyodide-dir``).
For each visible cell of each step, a fresh browser (Chromium: a new context; Firefox and WebKit:
a new browser with a new profile; empty caches either way) opens the step, waits for "ready",
and presses the cell's button (Run; Check for an exercise) once, then once more. If the cell
then fails on a name an earlier cell defines, a second fresh page runs the step's earlier cells
first (set-up, untimed) and then the cell. The times per cell:

* ``done_ms``: the page's own "Done in N ms" (the learner's wait from the click, the step's
  hidden set-up cells included); for an exercise, whose status is a verdict, the worker's time
  in the cell, its check and the set-up cells;
* ``worker_ms``: the worker's time in Python for the cell (the kernel result's ``ms``);
* ``setup_ms``: the worker's time in the step's hidden set-up cells (the page starts them at
  ready: counted when they end after the press), and in the cells above it that the press ran
  first (``ran_first``: those it needs that had not run, order.js);
* ``again_ms``: the second press on the same page (the set-up and the cells above have run), as
  the page's "Done in", or the worker's time for an exercise: the same engine warmed by one run;
  ``again_worker_ms``: that press's worker time in the cell, to set beside ``worker_ms``.

With ``--read-for S`` each press waits S seconds after ready, as a learner reading the step
first: the step's set-up (run at ready) and the engine's background compiling of the
interpreter's WebAssembly have had that time. Such a run is kept apart
(``first_run[_<engine>]_read<S>``).

The warm median beside it is ``bench/lesson_cells.py``'s (Chromium, repeated runs, after the wasm
warmed up), read from its latest result. Step 1 also gives "ready → first output": its first
cell (numpy and ``promptdojo.decoding`` imported) pressed by the page itself the moment it is
ready, from the ``pd:ready`` mark and from the click (``pd:run-start``) to ``pd:first-output``.

The engines are the cross-engine walk's (tests/e2e/engines.py): Debian's Chromium through
Playwright, Firefox ESR through puppeteer-core over WebDriver BiDi, WebKitGTK through Selenium
under Xvfb. Each writes its own result (``first_run``: Chromium; ``first_run_<engine>``). Times
depend on the machine's load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import RESULTS, ROOT, save
from promptdojo.course import discover, load_lesson
from promptdojo.course.model import CellKind, Lesson, Step
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server
from tests.e2e.engines import ENGINES, Engine, launch, missing, wait_for
from tests.e2e.test_engines import CELL_TIMEOUT_S, js, open_ready, wait_done
from tests.e2e.test_engines import press as press_button
from tests.e2e.walk import _RECORD_RUNS
from tests.support.numpy_release import build

#: Goal (issue: the first run): every cell's first run on a fresh page within 2 s in Chromium.
FIRST_RUN_GOAL_MS = 2000
#: A fresh browser for one page: a new context of one Chromium, or a new Firefox or WebKit.
Opener = Callable[[], Engine]


def result_name(engine: str, read_for: float = 0) -> str:
    """The result file of ``engine``'s run (Chromium keeps the name the report has always read);
    with ``read_for``, the run whose presses wait that many seconds after ready."""
    name = "first_run" if engine == "chromium" else f"first_run_{engine}"
    return name + (f"_read{read_for:g}" if read_for else "")


def kernel_runs(engine: Engine) -> list[dict]:
    """Every kernel run since the page loaded: ``{cellId, ms, ok}`` (tests/e2e/walk.py)."""
    return engine.evaluate("window.promptdojoKernel.__walkRuns") or []


def press(engine: Engine, step: Step, cell_id: str) -> dict:
    """Press the cell's button once; its status text, error text and worker milliseconds."""
    cell = next(c for c in step.cells if c.id == cell_id)
    button = "Check" if cell.kind is CellKind.EXERCISE and step.exercise(cell_id) else "Run"
    before = len(kernel_runs(engine))
    press_button(engine, cell_id, button)
    status = wait_done(engine, cell_id, CELL_TIMEOUT_S)
    runs = kernel_runs(engine)[before:]
    # Its own runs: the cell, and its exercise's check (``<id>-check``); a cell may itself be
    # named ``…-check``.
    ours = [r["cellId"] in (cell_id, f"{cell_id}-check") for r in runs]
    visible = {c.id for c in step.cells} - {cell_id}
    worker = sum(r["ms"] or 0 for r, mine in zip(runs, ours, strict=True) if mine)
    others = sum(r["ms"] or 0 for r, mine in zip(runs, ours, strict=True) if not mine)
    error = engine.evaluate(
        f"document.querySelector({js(f'#cell-{cell_id} .cell-output pre.error')})"
        "?.textContent ?? ''"
    )
    return {
        "status": status,
        "error": error,
        "worker_ms": round(worker, 1),
        "setup_ms": round(others, 1),
        # The cells above it that this press ran first (order.js), in the order they ran.
        "ran_first": [r["cellId"] for r in runs if r["cellId"] in visible],
    }


def _once_kernel(function: str) -> str:
    """An expression for the page: the JavaScript ``function`` called now if the page's kernel
    exists, else as soon as it does (the ``promptdojo:kernel`` event)."""
    return f"""(() => {{
  const call = {function};
  if (window.promptdojoKernel) call();
  else window.addEventListener("promptdojo:kernel", () => call(), {{once: true}});
}})()"""


#: Installed as soon as the page has loaded, before "ready": the kernel's runs are recorded
#: from its first, so the step's hidden set-up, which the page starts at ready, is among them.
_RECORD_FROM_START = _once_kernel(_RECORD_RUNS)


@contextlib.contextmanager
def fresh_step(open_engine: Opener, url: str, read_for: float = 0) -> Iterator[Engine]:
    """A fresh browser on the step at ``url``, Python ready (and ``read_for`` seconds more, as
    a learner reading the step before pressing), its kernel runs recorded from the start."""
    engine = open_engine()
    try:
        open_ready(engine, url, then=lambda: engine.evaluate(_RECORD_FROM_START))
        time.sleep(read_for)
        yield engine
    finally:
        engine.close()


def _done_ms(result: dict) -> float:
    """The page's "Done in", or (an exercise's verdict) the worker's time with the set-up."""
    done = re.search(r"Done in ([\d,]+) ms", result["status"])
    if done:
        return int(done.group(1).replace(",", ""))
    return round(result["worker_ms"] + result["setup_ms"], 1)


def first_run(
    open_engine: Opener, base: str, lesson: Lesson, step: Step, index: int, read_for: float = 0
) -> dict:
    """The first press of the step's cell ``index`` on a fresh page (earlier cells if needed),
    and a second press on the same page."""
    cell = step.cells[index]
    url = f"{base}/lessons/{lesson.id}/{step.number}"
    for setup in (False, True):
        with fresh_step(open_engine, url, read_for) as engine:
            engine.step = f"{lesson.id}/{step.number}/{cell.id}"
            if setup:
                for earlier in step.cells[:index]:
                    press(engine, step, earlier.id)
            result = press(engine, step, cell.id)
            again = press(engine, step, cell.id)
        needs_earlier = "NameError" in result["error"] + result["status"]
        if cell.raises or not needs_earlier or setup:
            break
    return {
        "cell": f"{lesson.id}/{step.number}/{cell.id}",
        "done_ms": _done_ms(result),
        "worker_ms": result["worker_ms"],
        "setup_ms": result["setup_ms"],
        "ran_first": result["ran_first"],
        "again_ms": _done_ms(again),
        "again_worker_ms": again["worker_ms"],
        "with_earlier_cells": setup,
        "status": result["status"],
    }


#: Installed as soon as the page has loaded: the page itself presses the first cell's Run the
#: moment the kernel is ready (after the page's own "ready" listeners), as a learner waiting with
#: the mouse over it would, without the harness's own reaction time.
_PRESS_AT_READY = _once_kernel(
    """() => window.promptdojoKernel.addPhaseListener((phase) => {
  if (phase === "ready") setTimeout(() => document.querySelector(".cell button.run").click(), 0);
})"""
)


def _mark(name: str) -> str:
    return f"performance.getEntriesByName({js(name)})[0]?.startTime ?? null"


def ready_to_output(open_engine: Opener, base: str, lesson: Lesson) -> dict:
    """Step 1's first cell pressed at "ready": milliseconds to its first output."""
    engine = open_engine()
    engine.step = "ready to first output"
    try:
        engine.goto(f"{base}/lessons/{lesson.id}/1")
        engine.evaluate(_PRESS_AT_READY)
        output = wait_for(engine, _mark("pd:first-output"))
        return {
            "cell": f"{lesson.id}/1/{lesson.steps[0].cells[0].id}",
            "click_to_output_ms": round(output - engine.evaluate(_mark("pd:run-start"))),
            "ready_to_output_ms": round(output - engine.evaluate(_mark("pd:ready"))),
        }
    finally:
        engine.close()


def warm_medians() -> dict[str, float]:
    path = RESULTS / "lesson_cells.json"
    if not path.is_file():
        return {}
    return {c["cell"]: c["browser_ms"] for c in json.loads(path.read_text())["figures"]["per_cell"]}


@contextlib.contextmanager
def opener(name: str) -> Iterator[Opener]:
    """Fresh browsers of engine ``name``: Chromium's are contexts of one shared browser."""
    if name != "chromium":
        yield lambda: launch(name)
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield lambda: launch(name, browser)
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="chromium", choices=list(ENGINES))
    parser.add_argument("--out", default="", help="result file name (default: per engine)")
    parser.add_argument("--only", default="", help="only cells whose key starts so, e.g. lesson/7/")
    parser.add_argument(
        "--read-for",
        type=float,
        default=0,
        help="seconds between ready and the press, as a learner reading the step (default 0)",
    )
    args = parser.parse_args()
    if missing(args.engine):
        sys.exit(f"{args.engine}: {missing(args.engine)}")
    lessons = [load_lesson(folder) for folder in discover(ROOT / "lessons")]
    release = build()
    warm = warm_medians()
    cells: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, opener(args.engine) as open_engine:
        server = start_server(
            ROOT / "lessons", Path(tmp), "--pyodide-dir", str(release.path), "--offline"
        )
        try:
            first_output = ready_to_output(open_engine, server.url, lessons[0])
            for lesson in lessons:
                for step in lesson.steps:
                    for index, cell in enumerate(step.cells):
                        if not f"{lesson.id}/{step.number}/{cell.id}".startswith(args.only):
                            continue
                        row = first_run(open_engine, server.url, lesson, step, index, args.read_for)
                        row["warm_ms"] = warm.get(row["cell"])
                        print(f"{row['cell']}: {row['done_ms']} ms", file=sys.stderr)
                        cells.append(row)
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
            "read_for_s": args.read_for,
            "first_output": first_output,
            "per_cell": cells,
        }
    }
    read = f" --read-for {args.read_for:g}" if args.read_for else ""
    save(
        args.out or result_name(args.engine, args.read_for),
        figures,
        f"python bench/first_run.py --engine {args.engine}{read}",
    )


if __name__ == "__main__":
    main()
