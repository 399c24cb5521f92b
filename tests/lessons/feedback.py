"""What the lessons' feedback tests share: a step run up to one exercise in a real kernel, so
that wrong answers meet its check, and the rule for a message that names a symptom."""

from __future__ import annotations

import html
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


def check_wrong_answers(lesson: Lesson, step: int, exercise_id: str, forbidden: tuple[str, ...]):
    """The starter and each wrong answer of the exercise meet the message it expects, which
    names a symptom with numbers and gives away none of ``forbidden``; the solution passes."""
    exercise = Exercise(lesson, step, exercise_id)
    wrong = exercise.exercise.wrong
    messages = [exercise.message(c.code) for c in (exercise.cell, *wrong)]
    for message in messages:
        symptom(message, forbidden)
    for cell, message in zip(wrong, messages[1:], strict=True):
        assert cell.expect in message, (cell.id, message)
    assert exercise.passes(exercise.exercise.solution.code)


def check_hints_hold_no_solution_line(lesson: Lesson, skipped: tuple[str, ...]) -> None:
    """No hint of ``lesson`` holds a line of its solution (lines starting with ``skipped``,
    comments and blank lines aside)."""
    for step in lesson.steps:
        for exercise in step.exercises:
            solution = [
                line.strip()
                for line in exercise.solution.code.splitlines()
                if line.strip() and not line.strip().startswith(("#", *skipped))
            ]
            for hint in exercise.hints:
                text = html.unescape(re.sub(r"<[^>]+>", "", hint.html))
                for line in solution:
                    assert line not in text, (exercise.id, line)


def check_every_exercise_has_wrong_answers(lesson: Lesson, forbidden: dict) -> None:
    """Each exercise of ``lesson`` has at least three wrong answers, each with the message it
    expects, and ``forbidden`` names every exercise."""
    for step in lesson.steps:
        for exercise in step.exercises:
            assert len(exercise.wrong) >= 3, (step.path.name, exercise.id)
            assert all(w.expect for w in exercise.wrong), (step.path.name, exercise.id)
    assert sorted(forbidden) == sorted(e.id for s in lesson.steps for e in s.exercises)
