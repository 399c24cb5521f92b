"""Every cell of every shipped lesson runs in CPython, with the same kernel as the browser."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdojo.checking.execute import run_step
from promptdojo.course import discover, load_lesson
from tests.conftest import REAL_LESSONS

STEPS = [
    pytest.param(step, id=f"{folder.name}/{step.path.name}")
    for folder in discover(REAL_LESSONS)
    for step in load_lesson(folder).steps
]


def test_there_are_lessons_to_check() -> None:
    assert len(STEPS) >= 1


@pytest.mark.parametrize("step", STEPS)
def test_every_cell_of_the_step_runs(step) -> None:
    outcomes = run_step(step)
    failed = [o for o in outcomes if not o.result.ok]
    assert not failed, "\n".join(
        f"{o.cell.location.path}:{o.markdown_line or o.cell.first_line}: {o.result.traceback}"
        for o in failed
    )
    assert len(outcomes) == len(step.cells)


def test_a_failing_cell_points_at_its_markdown_line(tmp_path: Path) -> None:
    lesson = tmp_path / "broken"
    lesson.mkdir()
    (lesson / "lesson.yaml").write_text("id: broken\ntitle: Broken\nchapter: ch 1\n")
    (lesson / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python\nx = 1\ny = x / 0\nprint(y)\n```\n"
        "\n```python\nz = 2\n```\n"
    )
    outcomes = run_step(load_lesson(lesson).steps[0])
    assert len(outcomes) == 1, "cells after a failure do not run"
    assert outcomes[0].result.error_type == "ZeroDivisionError"
    assert outcomes[0].markdown_line == 7
