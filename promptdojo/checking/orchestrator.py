"""``promptdojo check``: validate, then hand every step to a backend, steps in parallel."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from promptdojo.checking.backends import Backend
from promptdojo.checking.backends.cpython import run_step_in_process
from promptdojo.checking.outcome import CheckResult, StepResult, cells_of
from promptdojo.course.model import Lesson, Step
from promptdojo.course.validate import validate


def check(
    paths: Iterable[Path],
    jobs: int | None = None,
    run_step: Backend = run_step_in_process,
    on_step: Callable[[StepResult], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> CheckResult:
    """Validate the lessons under ``paths``, then run all their steps, ``jobs`` at a time.

    ``run_step`` is the backend: a fresh CPython process per step by default.
    """
    started = time.perf_counter()
    validation = validate(list(paths))
    result = CheckResult(diagnostics=list(validation.diagnostics))
    work: list[tuple[Lesson, Step]] = [
        (lesson, step) for lesson in validation.lessons for step in lesson.steps
    ]
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
