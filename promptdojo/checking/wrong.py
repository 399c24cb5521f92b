"""Wrong answers, proven: each ``{.wrong for=ID}`` cell runs in place of its exercise, and the
exercise's check must reject it, with a message holding ``expect=`` when the cell gives one.

Each wrong answer starts from the namespace the exercise's starter saw, and the random
generators' state it saw; afterwards the namespace and the generators are put back as the
starter left them, so the solution and the cells below run exactly as without wrong answers.
A wrong answer whose own code raises counts as rejected by that error (the learner sees it
before any check), and ``expect=`` is matched against ``Type: message`` in both cases.

Runs inside Pyodide too (``check --pyodide``): standard library only.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from promptdojo.checking.outcome import CellOutcome, Status
from promptdojo.course.model import Cell, Exercise

if TYPE_CHECKING:
    from promptdojo.checking.judge import StepRunner


@contextmanager
def kept_generators() -> Iterator[None]:
    """Put ``random``'s and numpy's global generators back as they were."""
    numpy = sys.modules.get("numpy")
    state = random.getstate()
    numpy_state = numpy.random.get_state() if numpy is not None else None
    try:
        yield
    finally:
        random.setstate(state)
        if numpy is not None:
            numpy.random.set_state(numpy_state)


def _put_back(namespace: dict[str, Any], saved: dict[str, Any]) -> None:
    namespace.clear()
    namespace.update(saved)


def judge_wrong(
    runner: StepRunner, exercise: Exercise, limit: float, before: dict[str, Any]
) -> list[CellOutcome]:
    """One outcome per wrong answer of ``exercise``; ``before`` is the namespace the starter
    saw (the current one is what the starter left, and is what stays)."""
    namespace = runner.kernel.namespace(runner.key)
    after = dict(namespace)
    outcomes = []
    with kept_generators():
        for wrong in exercise.wrong:
            _put_back(namespace, before)
            with kept_generators():
                outcomes.append(_judge_one(runner, exercise, wrong, limit))
    _put_back(namespace, after)
    return outcomes


def _judge_one(runner: StepRunner, exercise: Exercise, wrong: Cell, limit: float) -> CellOutcome:
    result, _, seconds = runner.execute(wrong, limit)
    if result.ok:
        result, _, more = runner.execute(exercise.check, limit)
        seconds += more
    status, message = Status.PASSED, ""
    said = f"{result.error_type}: {result.error_message}"
    if result.error_type == "CellTimeout":
        status, message = Status.FAILED, f"timed out: {result.error_message}"
    elif result.ok:
        status = Status.FAILED
        message = (
            f"the check of exercise {exercise.id!r} accepts this wrong answer: tighten the "
            "check, or fix the wrong answer"
        )
    elif wrong.expect and wrong.expect not in said:
        status = Status.FAILED
        message = (
            f"the check rejects this wrong answer with {said!r}, not with a message holding "
            f"{wrong.expect!r}: change the check's message, or expect="
        )
    return CellOutcome(
        wrong.id,
        str(wrong.location.path),
        wrong.first_line,
        status,
        message,
        traceback=(result.traceback or "") if status is Status.FAILED else "",
        seconds=seconds,
    )


def skipped_wrong(exercise: Exercise, why: str) -> list[CellOutcome]:
    """The wrong answers of an exercise that did not run, each skipped with ``why``."""
    why = why if why.startswith("skipped") else f"skipped: exercise {exercise.id!r} did not run"
    return [CellOutcome.of(wrong, Status.SKIPPED, why) for wrong in exercise.wrong]
