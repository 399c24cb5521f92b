"""``promptdojo check``: validate, then run every step in a fresh process, steps in parallel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from promptdojo.checking.serialize import step_to_dict
from promptdojo.checking.steprun import CellOutcome, Status
from promptdojo.course.model import Cell, Diagnostic, Lesson, Step
from promptdojo.course.validate import validate

#: One BLAS thread wherever lesson cells run: steps already run in parallel, Pyodide has one
#: thread too, and a BLAS pool per process oversubscribes the cores (cells then hit their limits).
ONE_BLAS_THREAD = {
    name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
}

#: Seconds a step's process may take beyond the sum of its cells' limits (start-up, imports).
PROCESS_MARGIN = 30.0


@dataclass
class StepResult:
    """Every cell outcome of one step."""

    lesson: Lesson
    step: Step
    outcomes: list[CellOutcome]
    seconds: float


@dataclass
class CheckResult:
    """The whole run: validation problems and every step's outcomes."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def outcomes(self) -> list[CellOutcome]:
        return [o for s in self.steps for o in s.outcomes]

    def count(self, status: Status) -> int:
        return sum(o.status is status for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """0 all passed; 1 a failure or a validation problem; 3 some cells could not run."""
        if self.diagnostics or self.count(Status.FAILED):
            return 1
        if self.count(Status.NOT_RUN):
            return 3
        return 0


def cells_of(step: Step) -> list[Cell]:
    """The cells a step reports on, in order: setup cells, then the visible ones."""
    return [*step.setup, *step.cells]


def process_budget(lesson: Lesson, step: Step) -> float:
    """Seconds a step's process may take: every cell's limit (exercises run up to three parts:
    starter, check, solution, check), plus start-up and imports."""
    budget = sum(lesson.time_limit_of(c) for c in cells_of(step)) + PROCESS_MARGIN
    return budget + sum(2 * lesson.time_limit_of(e.starter) for e in step.exercises)


def fill_missing(step: Step, done: list[CellOutcome], why: str) -> list[CellOutcome]:
    """Outcomes for the cells a crashed or killed process never reported."""
    cells = cells_of(step)
    out = list(done)
    for i, cell in enumerate(cells[len(done) :]):
        status, message = (Status.FAILED, why) if i == 0 else (Status.SKIPPED, "")
        if i:
            message = f"skipped: cell {cells[len(done)].id!r} failed earlier in this step"
        out.append(CellOutcome(cell.id, str(cell.location.path), cell.first_line, status, message))
    return out


def run_step_in_process(lesson: Lesson, step: Step) -> StepResult:
    """Run ``step`` in a fresh CPython process and collect its outcomes."""
    started = time.perf_counter()
    budget = process_budget(lesson, step)
    with tempfile.TemporaryDirectory(prefix="promptdojo-check-") as tmp:
        job, result = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job.write_text(
            json.dumps({"step": step_to_dict(step), "time_limit": lesson.time_limit}),
            encoding="utf-8",
        )
        env = {**ONE_BLAS_THREAD, **os.environ, "PYTHONHASHSEED": str(lesson.seed)}
        why = ""
        try:
            done = subprocess.run(
                [sys.executable, "-m", "promptdojo.checking.worker", str(job), str(result)],
                capture_output=True,
                text=True,
                timeout=budget,
                env=env,
            )
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
                why = f"the step's process crashed (exit {done.returncode}): " + " | ".join(tail)
        except subprocess.TimeoutExpired:
            why = f"the step's process was killed after {budget:g} s"
        outcomes = []
        if result.is_file():
            outcomes = [CellOutcome.from_dict(d) for d in json.loads(result.read_text())]
    if len(outcomes) < len(cells_of(step)):
        outcomes = fill_missing(step, outcomes, why or "the step's process ended early")
    return StepResult(lesson, step, outcomes, time.perf_counter() - started)


def check(
    paths: Iterable[Path],
    jobs: int | None = None,
    run_step: Callable[[Lesson, Step], StepResult] = run_step_in_process,
    on_step: Callable[[StepResult], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> CheckResult:
    """Validate the lessons under ``paths``, then run all their steps, ``jobs`` at a time."""
    started = time.perf_counter()
    validation = validate(list(paths))
    result = CheckResult(diagnostics=list(validation.diagnostics))
    work = [(lesson, step) for lesson in validation.lessons for step in lesson.steps]
    if on_plan is not None:
        on_plan(sum(len(cells_of(step)) for _, step in work))
    workers = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_step, lesson, step) for lesson, step in work]
        for future in as_completed(futures):
            step_result = future.result()
            result.steps.append(step_result)
            if on_step is not None:
                on_step(step_result)
    order = {id(step): i for i, (_, step) in enumerate(work)}
    result.steps.sort(key=lambda s: order[id(s.step)])
    result.seconds = time.perf_counter() - started
    return result
