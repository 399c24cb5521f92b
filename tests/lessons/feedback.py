"""What the lessons' feedback tests share: a step run up to one exercise in a real kernel, so
that wrong answers meet its check, and the rule for a message that names a symptom."""

from __future__ import annotations

import re
from dataclasses import replace

from promptdojo.checking.judge import StepRunner
from promptdojo.course.model import Lesson
from promptdojo.kernel import seed_everything


class Exercise:
    """One step of ``lesson`` run up to an exercise, in a real kernel, so wrong answers can meet
    its check."""

    def __init__(self, lesson: Lesson, step: int, exercise_id: str) -> None:
        self.step = lesson.steps[step - 1]
        self.runner = StepRunner(self.step, seed=lesson.seed, numpy=True)
        self.exercise = self.step.exercise(exercise_id)
        assert self.exercise is not None
        seed_everything(lesson.seed, numpy=True)
        for cell in (*self.step.setup, *self.step.cells):
            if cell.id == exercise_id:
                self.cell = cell
                break
            outcome = self.runner.run_cell(cell)
            assert outcome.status.name == "PASSED", outcome

    def message(self, code: str) -> str:
        """The check's message for ``code`` in place of the exercise (it must fail)."""
        result, _, _ = self.runner.execute(replace(self.cell, code=code), 30)
        assert result.ok, result.traceback
        verdict, _, _ = self.runner.execute(self.exercise.check, 30)
        assert not verdict.ok, f"the check accepted:\n{code}"
        assert verdict.error_type == "AssertionError", verdict.traceback
        return verdict.error_message

    def passes(self, code: str) -> bool:
        assert self.runner.execute(replace(self.cell, code=code), 30)[0].ok
        return self.runner.execute(self.exercise.check, 30)[0].ok


def symptom(message: str, forbidden: tuple[str, ...]) -> None:
    """A message with numbers in it, and none of the forbidden code or answer fragments."""
    assert re.search(r"\d", message), message
    for fragment in forbidden:
        assert fragment not in message, (fragment, message)
