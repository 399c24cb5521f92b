"""``promptdojo check``: validate, then hand every step to a backend, steps in parallel."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from promptdojo.checking.backends import Backend
from promptdojo.checking.backends.cpython import run_step_in_process
from promptdojo.checking.outcome import CellOutcome, CheckResult, Status, StepResult, cells_of
from promptdojo.checking.selection import parse_target, select
from promptdojo.course.model import Diagnostic, Lesson, Step
from promptdojo.course.validate import validate


def check(
    paths: Iterable[Path],
    jobs: int | None = None,
    run_step: Backend = run_step_in_process,
    on_step: Callable[[StepResult], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> CheckResult:
    """Validate the lessons under ``paths``, then run all their steps, ``jobs`` at a time.

    ``run_step`` is the backend: a CPython process per step by default. ``on_warning``
    hears, before any cell runs, of declared packages the CPython backend's Python lacks.
    """
    started = time.perf_counter()
    targets, problems = [], []
    for path in paths:
        target = parse_target(path)
        (problems if isinstance(target, Diagnostic) else targets).append(target)
    folders = list(dict.fromkeys(t.folder for t in targets))
    validation = validate(folders) if folders else None
    result = CheckResult(diagnostics=problems + (validation.diagnostics if validation else []))
    lesson_steps = [
        (lesson, step)
        for lesson in (validation.lessons if validation else [])
        for step in lesson.steps
    ]
    cpython = run_step is run_step_in_process or (
        isinstance(run_step, functools.partial) and run_step.func is run_step_in_process
    )
    if on_warning is not None and cpython:
        from promptdojo.checking.packages import warnings_for

        for warning in warnings_for(validation.lessons if validation else []):
            on_warning(warning)
    chosen, unknown = select(targets, lesson_steps)
    result.diagnostics += unknown
    reported = {id(s.step): s.cell_id for _, s in chosen}
    work: list[tuple[Lesson, Step]] = [(lesson, s.step) for lesson, s in chosen]
    if on_plan is not None:
        on_plan(sum(len(cells_of(step)) for _, step in work))
    workers = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_step, lesson, step) for lesson, step in work]
        for future in as_completed(futures):
            step_result = future.result()
            only = reported.get(id(step_result.step))
            if only is not None:
                step_result.outcomes = _selected(step_result.outcomes, only, step_result.step)
                step_result.selected = only
            result.steps.append(step_result)
            if on_step is not None:
                on_step(step_result)
    order = {id(step): i for i, (_, step) in enumerate(work)}
    result.steps.sort(key=lambda s: order[id(s.step)])
    result.seconds = time.perf_counter() - started
    return result


def _selected(outcomes: list[CellOutcome], cell_id: str, step: Step) -> list[CellOutcome]:
    """The selected cell's outcome, after any failure above it that may explain it (a wrong
    answer's failure explains nothing below it)."""
    wrong = {w.id for e in step.exercises for w in e.wrong}
    return [
        o
        for o in outcomes
        if o.cell_id == cell_id or (o.status is Status.FAILED and o.cell_id not in wrong)
    ]
