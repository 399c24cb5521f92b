"""Every exercise of the serving lesson rejects its starter and the lesson's own wrong answers
(at least three each), through the lesson's own check, with a message that names a symptom with
numbers and gives away neither the mechanism's code nor the answer."""

from __future__ import annotations

import pytest

from promptdojo.course import load_lesson
from tests.conftest import REAL_LESSONS
from tests.lessons.feedback import (
    check_every_exercise_has_wrong_answers,
    check_hints_hold_no_solution_line,
    check_wrong_answers,
)

LESSON = load_lesson(REAL_LESSONS / "serving")


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
    check_every_exercise_has_wrong_answers(LESSON, FORBIDDEN)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_wrong_answers_get_a_symptom_not_the_answer(case) -> None:
    """The starter and each wrong answer of the lesson meet the message it expects, which
    names a symptom with numbers and gives away neither the code nor the answer."""
    step, exercise_id = case
    check_wrong_answers(LESSON, step, exercise_id, FORBIDDEN[exercise_id])


def test_hints_lead_without_handing_over_the_solution() -> None:
    check_hints_hold_no_solution_line(LESSON, ("print", "def ", "return"))
