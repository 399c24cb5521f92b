"""How ``check`` reports: a cell that uses most of its time limit gets a warning at its line."""

from __future__ import annotations

from pathlib import Path

from promptdojo.checking.outcome import CellOutcome, CheckResult, Status, StepResult
from promptdojo.checking.report import slow_cells
from promptdojo.course import load_lesson
from tests.conftest import ROOT

STDLIB = ROOT / "tests" / "fixtures" / "pyodide" / "stdlib"


def result_with(seconds: dict[str, float], status: Status = Status.PASSED) -> CheckResult:
    lesson = load_lesson(STDLIB)
    step = lesson.steps[2]  # 03-times-out.md: `spin` has time_limit=1, the next cell the default
    outcomes = [
        CellOutcome(c.id, str(c.location.path), c.first_line, status, seconds=seconds[c.id])
        for c in step.cells
    ]
    return CheckResult(steps=[StepResult(lesson, step, outcomes, sum(seconds.values()))])


def test_more_than_half_the_limit_is_warned_at_the_cell_line() -> None:
    lesson = load_lesson(STDLIB)
    limit = lesson.time_limit
    spin, after = (c.id for c in lesson.steps[2].cells)
    warnings = slow_cells(result_with({spin: 0.6, after: 0.4 * limit}))
    path = Path(STDLIB / "03-times-out.md")
    assert warnings == [
        f"{path}:6: warning: cell 'spin' took 0.6 s, more than 50% of its 1 s time limit: a "
        "slower computer may stop it. Make it lighter (less data, one batched computation "
        "instead of a Python loop) or raise its `time_limit=`."
    ]


def test_fast_or_failed_cells_are_not_warned() -> None:
    lesson = load_lesson(STDLIB)
    spin, after = (c.id for c in lesson.steps[2].cells)
    assert slow_cells(result_with({spin: 0.5, after: 0.1})) == []
    assert slow_cells(result_with({spin: 0.9, after: 0.1}, Status.FAILED)) == []
