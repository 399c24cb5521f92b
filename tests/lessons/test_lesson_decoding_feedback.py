"""Every exercise of the first lesson rejects its starter and realistic wrong answers, through the
lesson's own check, with a message that names a symptom with numbers and gives away neither the
formula nor the answer."""

from __future__ import annotations

import pytest

from promptdojo.course import load_lesson
from tests.conftest import REAL_LESSONS
from tests.lessons.feedback import (
    check_every_exercise_has_wrong_answers,
    check_hints_hold_no_solution_line,
    check_wrong_answers,
)

LESSON = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization")


#: Per exercise, fragments of its formula or answer that no message of its check may give away.
FORBIDDEN = {
    "coldest": ("**(1/", "** (1", "0.6**"),
    "round-by-hand": ("np.round", "/ 0.25", "* 0.25"),
    "ratio-at": ("** (1 / t)", "1 / t", "e**", "exp"),
    "min-p-for": ("p_max", "p_k", "/ probs", "probs["),
    "decode-step": ("sqrt", "np.repeat", "concatenate", "h // 2", "@"),
    "mla": ("70,272", "70272", "68.6", "kv_lora_rank", "576", "+ 64"),
    "roofline": ("bandwidth /", "weight_bytes +", "* kv_per_token", "batch *"),
    "capacity": ("0.92", "kv_cache_budget", "sessions_that_fit", "2 * 32", "//"),
    "weak-spot": ("-8", "+7", "15/16", "clipped", "opposite"),
    "ship": ("/ base", "should be", "quantized_ppl /", "- 1 <="),
}
CASES = [(s.number, e.id) for s in LESSON.steps for e in s.exercises]


def test_every_exercise_has_three_wrong_answers_with_their_messages() -> None:
    check_every_exercise_has_wrong_answers(LESSON, FORBIDDEN)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_wrong_answers_get_a_symptom_not_the_answer(case) -> None:
    """The starter and each wrong answer of the lesson meet the message it expects, which
    names a symptom with numbers and gives away neither the formula nor the answer."""
    step, exercise_id = case
    check_wrong_answers(LESSON, step, exercise_id, FORBIDDEN[exercise_id])


def test_feedback_is_tiered() -> None:
    """Hints lead rather than hand over the solution: no hint holds the solution's key line."""
    check_hints_hold_no_solution_line(LESSON, ("print", "def ", "from "))
