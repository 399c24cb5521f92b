"""Every cell of every shipped lesson passes the cell check's rules, in this process."""

from __future__ import annotations

import pytest

from promptdojo.checking.steprun import Status, StepRunner
from promptdojo.course import discover, load_lesson
from tests.conftest import REAL_LESSONS

STEPS = [
    pytest.param(lesson, step, id=f"{folder.name}/{step.path.name}")
    for folder in discover(REAL_LESSONS)
    for lesson in [load_lesson(folder)]
    for step in lesson.steps
]


def test_there_are_lessons_to_check() -> None:
    assert len(STEPS) >= 7


@pytest.mark.parametrize(("lesson", "step"), STEPS)
def test_every_cell_of_the_step_passes(lesson, step) -> None:
    outcomes = StepRunner(step, lesson.time_limit).run()
    failed = [o for o in outcomes if o.status is not Status.PASSED]
    assert not failed, "\n".join(f"{o.path}:{o.line}: {o.message}\n{o.traceback}" for o in failed)
