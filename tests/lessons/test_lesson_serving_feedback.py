"""Every exercise of the serving lesson rejects its starter and the lesson's own wrong answers
(at least three each), through the lesson's own check, with a message that names a symptom with
numbers and gives away neither the mechanism's code nor the answer."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest

from promptdojo.checking.judge import StepRunner
from promptdojo.course import load_lesson
from promptdojo.kernel import seed_everything
from tests.conftest import REAL_LESSONS

LESSON = load_lesson(REAL_LESSONS / "serving")


class Exercise:
    """One step run up to an exercise, in a real kernel, so wrong answers can meet its check."""

    def __init__(self, step: int, exercise_id: str) -> None:
        self.step = LESSON.steps[step - 1]
        self.runner = StepRunner(self.step, seed=LESSON.seed, numpy=True)
        self.exercise = self.step.exercise(exercise_id)
        assert self.exercise is not None
        seed_everything(LESSON.seed, numpy=True)
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


#: Per exercise, fragments of its mechanism's code or answer that no message of its check may
#: give away.
FORBIDDEN = {
    "idle": ("max(", "len(batch)", "used / slots", "sum("),
    "grow": ("-(-", "// BLOCK", "len(free)", "popleft", "+ num_new"),
    "chain": ("parent", "start == 0", "len(tokens) - BLOCK", "NONE_HASH"),
    "make-room": ("running.pop()", "while free < need", "if victim == current", "break"),
    "verify": ("p[drafts] / q", "p - q", "np.maximum", "min(1", "/ r.sum()"),
    "engine": (
        "has_unfinished_requests",
        "num_computed_tokens for",
        "now +=",
        "update_from_output(",
    ),
}
CASES = [(s.number, e.id) for s in LESSON.steps for e in s.exercises]


def test_every_exercise_has_three_wrong_answers_with_their_messages() -> None:
    for step in LESSON.steps:
        for exercise in step.exercises:
            assert len(exercise.wrong) >= 3, (step.path.name, exercise.id)
            assert all(w.expect for w in exercise.wrong), (step.path.name, exercise.id)
    assert sorted(FORBIDDEN) == sorted(e for _, e in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_wrong_answers_get_a_symptom_not_the_answer(case) -> None:
    """The starter and each wrong answer of the lesson meet the message it expects, which
    names a symptom with numbers and gives away neither the code nor the answer."""
    step, exercise_id = case
    exercise = Exercise(step, exercise_id)
    wrong = exercise.exercise.wrong
    messages = [exercise.message(c.code) for c in (exercise.cell, *wrong)]
    for message in messages:
        symptom(message, FORBIDDEN[exercise_id])
    for cell, message in zip(wrong, messages[1:], strict=True):
        assert cell.expect in message, (cell.id, message)
    assert exercise.passes(exercise.exercise.solution.code)


def test_hints_lead_without_handing_over_the_solution() -> None:
    for step in LESSON.steps:
        for exercise in step.exercises:
            solution = [
                line.strip()
                for line in exercise.solution.code.splitlines()
                if line.strip() and not line.strip().startswith(("#", "print", "def ", "return"))
            ]
            for hint in exercise.hints:
                text = html.unescape(re.sub(r"<[^>]+>", "", hint.html))
                for line in solution:
                    assert line not in text, (exercise.id, line)
