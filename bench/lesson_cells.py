"""Every lesson cell's time where learners run it (Chromium, Pyodide with numpy) and in CPython.

python bench/lesson_cells.py [--runs N] [--out lesson_cells]

The browser side walks each shipped lesson as the end-to-end test does (tests/e2e/walk.py): a real
uvicorn serves a real Pyodide 0.29.0 release with its official numpy (``--pyodide-dir``), and
Chromium presses Run on every cell and Check on every exercise. A cell's time is what the worker
spent in Python for it: set-up cells alone, an exercise as starter + check + solution + check.
The CPython side runs the same steps in this process with the cell check's own runner (one BLAS
thread, as in ``promptdojo check``). With ``--runs N`` each side runs N times and every figure is
the per-cell median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from promptdojo.checking.backends.cpython import ONE_BLAS_THREAD

for _name, _value in ONE_BLAS_THREAD.items():  # before numpy is imported
    os.environ.setdefault(_name, _value)

from playwright.sync_api import sync_playwright  # noqa: E402

from bench._common import ROOT, save  # noqa: E402
from promptdojo.checking.judge import StepRunner  # noqa: E402
from promptdojo.course import discover, load_lesson  # noqa: E402
from promptdojo.course.model import Lesson  # noqa: E402
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server  # noqa: E402
from tests.e2e.walk import kernel_runs, walk  # noqa: E402
from tests.support.numpy_release import build  # noqa: E402

#: Goals on this machine (issue: "every cell fast in the browser").
CELL_GOAL_MS = 2000
LESSON_GOAL_MS = 15000


def attribute(lesson: Lesson, runs: list[dict]) -> list[tuple[dict, int]]:
    """Each kernel run of a walk with the step it belongs to, in the walk's order.

    Cell ids repeat across steps (``cell-1`` in steps 1 and 7), so a run belongs to the step the
    walk is on: the current one if it has that id, else the next one that has it. An exercise's
    check runs as ``<id>-check`` (counted with the cell); lesson.yaml's seed, run before each
    step, is left out.
    """
    ids = [{c.id for c in (*s.setup, *s.cells)} for s in lesson.steps]
    current, out = 0, []
    for entry in runs:
        cell_id = entry["cellId"]
        if not any(cell_id in step for step in ids[current:]):
            cell_id = cell_id.removesuffix("-check")
        found = next((i for i in range(current, len(ids)) if cell_id in ids[i]), None)
        if found is None:
            continue
        current = found
        out.append(({**entry, "cellId": cell_id}, lesson.steps[found].number))
    return out


def browser_ms(lessons: list[Lesson], runs: int) -> tuple[dict[str, list[float]], str]:
    """Per ``lesson/step/cell``: the worker's milliseconds in Python, one entry per run."""
    release = build()
    times: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        server = start_server(
            ROOT / "lessons", Path(tmp), "--pyodide-dir", str(release.path), "--offline"
        )
        try:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
            )
            for _ in range(runs):
                for lesson in lessons:
                    context = browser.new_context()
                    page = context.new_page()
                    cell_runs = walk(page, server.url, lesson)
                    problems = [p for r in cell_runs for p in r.problems]
                    for problem in problems:  # the e2e test fails on these; the times stand
                        print(f"warning: {problem}", file=sys.stderr)
                    per_cell: dict[str, float] = defaultdict(float)
                    for entry, step in attribute(lesson, kernel_runs(page)):
                        per_cell[f"{lesson.id}/{step}/{entry['cellId']}"] += entry["ms"]
                    for key, ms in per_cell.items():
                        times[key].append(ms)
                    context.close()
            browser.close()
        finally:
            stop_server(server)
    return times, release.version


def cpython_ms(lessons: list[Lesson], runs: int) -> dict[str, list[float]]:
    """Per ``lesson/step/cell``: milliseconds in this CPython, one entry per run."""
    times: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        for lesson in lessons:
            for step in lesson.steps:
                for outcome in StepRunner(step, lesson.time_limit).run():
                    key = f"{lesson.id}/{step.number}/{outcome.cell_id}"
                    times[key].append(outcome.seconds * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", default="lesson_cells", help="result file name (for a baseline)")
    args = parser.parse_args()
    lessons = [load_lesson(folder) for folder in discover(ROOT / "lessons")]
    browser, version = browser_ms(lessons, args.runs)
    cpython = cpython_ms(lessons, args.runs)
    cells = []
    for key, samples in browser.items():
        ms = statistics.median(samples)
        base = statistics.median(cpython[key]) if cpython.get(key) else None
        cells.append(
            {
                "cell": key,
                "browser_ms": round(ms, 1),
                "cpython_ms": round(base, 1) if base is not None else None,
                "ratio": round(ms / base, 1) if base else None,
            }
        )
    cells.sort(key=lambda c: -c["browser_ms"])
    browser_total = sum(c["browser_ms"] for c in cells)
    cpython_total = sum(c["cpython_ms"] or 0 for c in cells)
    figures = {
        "pyodide": version,
        "runs": args.runs,
        "cells": len(cells),
        "slowest_cell": cells[0]["cell"],
        "slowest_cell_ms": cells[0]["browser_ms"],
        "cells_over_goal": sum(c["browser_ms"] > CELL_GOAL_MS for c in cells),
        "lesson_total_ms": round(browser_total),
        "lesson_total_cpython_ms": round(cpython_total),
        "browser_cpython_ratio": round(browser_total / cpython_total, 1),
        "per_cell": cells,
    }
    command = f"python bench/lesson_cells.py --runs {args.runs}"
    save(args.out, figures, command)


if __name__ == "__main__":
    main()
