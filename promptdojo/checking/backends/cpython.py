"""The CPython backend: each step in a process of its own (:mod:`.cpython_step`), forked from a
warm parent where there is fork (:mod:`.forked`), else a fresh one."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Collection

from promptdojo.checking.backends.cpython_step import StepJob, StepLimits
from promptdojo.checking.backends.forked import available as forked_available
from promptdojo.checking.backends.forked import run_forked
from promptdojo.checking.backends.process import complete, json_lines, process_budget, run_job
from promptdojo.checking.environment import cell_environment
from promptdojo.checking.limits import DEFAULT_FILE_SIZE_LIMIT_MB, DEFAULT_MEMORY_LIMIT_MB
from promptdojo.checking.outcome import CellOutcome, StepResult
from promptdojo.checking.serialize import step_to_dict
from promptdojo.course.model import Lesson, Step

#: One BLAS thread wherever lesson cells run: steps already run in parallel, Pyodide has one
#: thread too, and a BLAS pool per process oversubscribes the cores (cells then hit their limits).
ONE_BLAS_THREAD = {
    name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
}
STEP_MODULE = "promptdojo.checking.backends.cpython_step"


def hash_seed(lesson: Lesson) -> int:
    """``PYTHONHASHSEED``: the lesson's seed, or 0, so sets print in the same order every run."""
    return (lesson.seed or 0) % 2**32


def _crashed(done) -> str:
    tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
    return f"the step's process crashed (exit {done.returncode}): " + " | ".join(tail)


MB = 1024 * 1024


def memory_limit(lesson: Lesson) -> int:
    """Bytes of address space a step's process may use (lesson.yaml's ``memory_limit_mb``)."""
    return (lesson.memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB) * MB


def run_step_in_process(lesson: Lesson, step: Step, pass_env: Collection[str] = ()) -> StepResult:
    """Run ``step`` in a CPython process of its own and collect its outcomes.

    The process sees the allowed environment only, plus the names in ``pass_env``
    (:mod:`promptdojo.checking.environment`).
    """
    started = time.perf_counter()
    numpy = "numpy" in lesson.packages
    # Forked from a warm parent where there is fork (no start-up per step), else a new process.
    run = functools.partial(run_forked, numpy=numpy) if forked_available() else run_job
    ended = run(
        [sys.executable, "-m", STEP_MODULE],
        StepJob(
            step=step_to_dict(step),
            time_limit=lesson.time_limit,
            seed=lesson.seed,
            numpy=numpy,
            limits=StepLimits(
                cpu=lesson.cpu_limit,
                file_size=(lesson.file_size_limit_mb or DEFAULT_FILE_SIZE_LIMIT_MB) * MB,
            ),
        ),
        process_budget(lesson, step),
        crashed=_crashed,
        killed="the step's process",
        read=json_lines,
        limits={"AS": memory_limit(lesson)},
        env={
            **cell_environment(pass_env, defaults=ONE_BLAS_THREAD),
            "PYTHONHASHSEED": str(hash_seed(lesson)),
        },
    )
    outcomes = [CellOutcome.from_dict(d) for d in ended.data or []]
    outcomes = complete(step, outcomes, ended.why or "the step's process ended early")
    return StepResult(lesson, step, outcomes, time.perf_counter() - started)
