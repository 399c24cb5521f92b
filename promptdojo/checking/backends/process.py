"""The shape both backends share: job file → subprocess under a budget → result file → verdicts."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptdojo.checking.outcome import CellOutcome, cells_of, fill_missing
from promptdojo.course.model import Lesson, Step

#: Seconds a step's process may take beyond the sum of its cells' limits (start-up, imports).
PROCESS_MARGIN = 30.0


def process_budget(lesson: Lesson, step: Step) -> float:
    """Seconds a step's process may take: every cell's limit (exercises run up to three parts:
    starter, check, solution, check), plus start-up and imports."""
    budget = sum(lesson.time_limit_of(c) for c in cells_of(step)) + PROCESS_MARGIN
    return budget + sum(2 * lesson.time_limit_of(e.starter) for e in step.exercises)


@dataclass(frozen=True)
class Ended:
    """How a step's process ended: what it wrote (``None`` if nothing) and why it stopped early."""

    data: Any
    why: str


def run_job(
    command: list[str],
    job: Mapping[str, Any],
    budget: float,
    *,
    crashed: Callable[[subprocess.CompletedProcess[str]], str],
    killed: str,
    env: Mapping[str, str] | None = None,
) -> Ended:
    """Write ``job``, run ``command + [JOB, RESULT]`` for at most ``budget`` seconds, read RESULT.

    ``crashed`` words a non-zero exit; ``killed`` names what was killed at the budget.
    """
    with tempfile.TemporaryDirectory(prefix="promptdojo-check-") as tmp:
        job_file, result = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job_file.write_text(json.dumps(job), encoding="utf-8")
        why = ""
        try:
            done = subprocess.run(
                [*command, str(job_file), str(result)],
                capture_output=True,
                text=True,
                timeout=budget,
                env=dict(env) if env is not None else None,
            )
            if done.returncode != 0:
                why = crashed(done)
        except subprocess.TimeoutExpired:
            why = f"{killed} was killed after {budget:g} s"
        data = json.loads(result.read_text(encoding="utf-8")) if result.is_file() else None
    return Ended(data, why)


def complete(step: Step, outcomes: list[CellOutcome], why: str) -> list[CellOutcome]:
    """``outcomes``, plus a failure and skips for the cells the process never reported."""
    if len(outcomes) < len(cells_of(step)):
        return fill_missing(step, outcomes, why)
    return outcomes
