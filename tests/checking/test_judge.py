"""The rules a cell is judged by, the same in `promptdojo check`, pytest and Pyodide."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from promptdojo.checking.judge import StepRunner
from promptdojo.checking.outcome import Status
from promptdojo.course import load_lesson
from promptdojo.course.parse import read_lesson
from tests.conftest import ROOT

EXERCISES = ROOT / "tests" / "fixtures" / "checking" / "exercises"


def run(folder: Path, number: int) -> dict[str, tuple[Status, str, int]]:
    lesson = load_lesson(folder)
    outcomes = StepRunner(lesson.steps[number - 1], lesson.time_limit).run()
    return {o.cell_id: (o.status, o.message, o.line) for o in outcomes}


def test_starter_that_already_passes_fails_the_exercise() -> None:
    status, message, line = run(EXERCISES, 1)["square"]
    assert status is Status.FAILED
    assert message.startswith("the starter code already passes its check")
    assert line == 6


def test_solution_that_fails_its_check_points_at_the_solution() -> None:
    status, message, line = run(EXERCISES, 2)["cube"]
    assert status is Status.FAILED
    assert message == (
        "the solution fails its check: AssertionError: cube(2) should be 8: "
        "fix the solution, or the check"
    )
    assert line == 15


def test_expected_errors() -> None:
    outcomes = run(EXERCISES, 3)
    assert outcomes["right"][0] is Status.PASSED
    assert outcomes["wrong"][:2] == (
        Status.FAILED,
        "expected KeyError, got: IndexError: list index out of range",
    )
    assert run(EXERCISES, 4)["quiet"][1] == "expected ValueError, but the cell ran without an error"


def test_a_failing_setup_skips_the_step() -> None:
    outcomes = list(run(EXERCISES, 5).values())
    assert outcomes[0][:2] == (Status.FAILED, "raised: RuntimeError: setup broke")
    assert outcomes[1][:2] == (Status.SKIPPED, "skipped: cell 'cell-1' failed earlier in this step")


def test_good_exercise_no_ci_and_solution_state(fixture_lessons: Path) -> None:
    outcomes = run(fixture_lessons / "hello", 3)
    assert outcomes["double"][0] is Status.PASSED
    assert outcomes["oops"][0] is Status.PASSED
    assert outcomes["network"][:2] == (Status.SKIPPED, "no-ci: needs the network, which CI lacks")


def test_time_limit_stops_a_runaway_cell(tmp_path: Path) -> None:
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\ntime_limit: 5\n")
    (tmp_path / "01-a.md").write_text(
        '---\ntitle: A\n---\n\n```python {time_limit="0.3"}\ntry:\n    while True:\n'
        "        pass\nexcept Exception:\n    pass\n```\n\n```python\nx = 1\n```\n"
    )
    outcomes = list(run(tmp_path, 1).values())
    assert outcomes[0][:2] == (
        Status.FAILED,
        "timed out: the cell ran longer than its time limit of 0.3 s",
    )
    assert outcomes[1][0] is Status.PASSED, "x = 1 does not depend on the runaway cell"


SCRATCH = """---
title: Four mistakes
---

```python {#a}
import random
print(undefined_name)
p = [0.5, 0.5]
```

```python {#uses-p}
print(sum(p))
```

```python {#b raises=valueerror}
int("x")
```

```python {#c}
q = 1 / 0
```

```python {#d}
k = 4
```

```python {#sq .exercise}
def square(x):
    return x * x
```

```python {.check for=sq}
assert square(3) == 9
```

```python {.solution for=sq}
def square(x):
    return x * x
```

```python {#after}
print(square(k))
```
"""


def test_every_independent_problem_is_reported_in_one_run(tmp_path: Path) -> None:
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(SCRATCH)
    step = read_lesson(tmp_path, lock=None).steps[0]
    outcomes = {o.cell_id: o for o in StepRunner(step).run()}
    status = {k: o.status for k, o in outcomes.items()}
    assert status == {
        "a": Status.FAILED,
        "uses-p": Status.SKIPPED,
        "b": Status.FAILED,
        "c": Status.FAILED,
        "d": Status.PASSED,
        "sq": Status.FAILED,  # the starter already passes its check
        "after": Status.PASSED,  # judged against the solution's namespace
    }
    assert outcomes["uses-p"].message == (
        "skipped: it uses p, missing because cell 'a' failed earlier in this step"
    )
    assert outcomes["after"].output.stdout == "16\n"


def test_a_cell_defining_what_later_cells_need_still_skips_them(tmp_path: Path) -> None:
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python\nraise SystemError\ndef f():\n    return 1\n```\n\n"
        "```python\nprint(f())\n```\n\n```python\nf = 2\n```\n\n```python\nprint(f)\n```\n"
    )
    outcomes = [o.status for o in StepRunner(load_lesson(tmp_path).steps[0]).run()]
    assert outcomes == [Status.FAILED, Status.SKIPPED, Status.PASSED, Status.PASSED]


def test_names_bound_before_the_failure_are_usable(tmp_path: Path) -> None:
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python\nx = 1\ny = 2\n```\n\n"
        "```python\nx = 10\nraise ValueError\ny = 20\n```\n\n"
        "```python\nprint(x)\n```\n\n```python\nprint(y)\n```\n"
    )
    outcomes = StepRunner(load_lesson(tmp_path).steps[0]).run()
    assert [o.status for o in outcomes] == [
        Status.PASSED,
        Status.FAILED,
        Status.PASSED,  # x was rebound before the error
        Status.SKIPPED,  # y still holds the value the failed cell meant to replace
    ]
    assert outcomes[2].output.stdout == "10\n"


def test_a_skip_carries_on_to_the_cells_that_use_what_the_skipped_cell_binds(
    tmp_path: Path,
) -> None:
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python\np = 1 / 0\n```\n\n```python\nq = p + 1\n```\n\n"
        "```python\nprint(q)\n```\n"
    )
    outcomes = StepRunner(load_lesson(tmp_path).steps[0]).run()
    assert [o.status for o in outcomes] == [Status.FAILED, Status.SKIPPED, Status.SKIPPED]
    assert outcomes[2].message == (
        "skipped: it uses q, missing because cell 'cell-1' failed earlier in this step"
    )


@pytest.mark.parametrize("numpy", [False, True])
def test_the_lesson_seed_makes_unseeded_draws_repeat(tmp_path: Path, numpy: bool) -> None:
    draw = "np.random.rand()" if numpy else "random.random()"
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(
        f"---\ntitle: A\n---\n\n```python\nimport random\nimport numpy as np\nprint({draw})\n```\n"
    )
    step = load_lesson(tmp_path, lock=None).steps[0]

    def printed(seed: int | None) -> str:
        (outcome,) = StepRunner(step, seed=seed, numpy=numpy).run()
        return outcome.output.stdout

    import random

    import numpy as np

    expected = np.random.RandomState(7).rand() if numpy else random.Random(7).random()
    assert printed(7) == printed(7) == f"{expected}\n"
    assert printed(None) != printed(None), "without a seed, every run draws fresh numbers"


@pytest.mark.timeout(30)
def test_the_cell_limit_respects_an_outer_alarm(tmp_path: Path) -> None:
    # pytest-timeout (signal method) has armed SIGALRM for this test; a cell limit must not
    # cancel it. After the cell, the outer alarm must still be pending.
    import signal

    from promptdojo.checking.limits import time_limit

    before, _ = signal.getitimer(signal.ITIMER_REAL)
    assert before > 0, "pytest-timeout's signal method arms SIGALRM"
    with time_limit(1.0):
        pass
    after, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 0 < after <= before


def test_an_expected_error_is_recorded_as_the_learner_sees_it(tmp_path: Path) -> None:
    (tmp_path / "lesson.yaml").write_text("id: t\ntitle: T\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python {#define}\ndef f(d):\n    return d['k']\n```\n\n"
        "```python {#boom raises=KeyError}\nx = 1\nf({})\n```\n"
    )
    outcomes = {o.cell_id: o for o in StepRunner(load_lesson(tmp_path).steps[0]).run()}
    assert outcomes["boom"].status is Status.PASSED
    # The source line of each frame, and carets under the failing part (their exact shape is
    # the Python version's).
    error = outcomes["boom"].output.error
    assert re.fullmatch(
        r"Traceback \(most recent call last\):\n"
        r'  File "<cell boom>", line 2, in <module>\n'
        r"    f\(\{\}\)\n(?:    [~^]+\n)?"
        r'  File "<cell define>", line 2, in f\n'
        r"    return d\['k'\]\n           ~\^+\n"
        r"KeyError: 'k'\n",
        error,
    ), error
    assert outcomes["define"].output.error == ""


WRONG = ROOT / "tests" / "fixtures" / "checking" / "wrong"


def test_each_wrong_answer_is_judged_after_its_exercise_at_its_own_line() -> None:
    lesson = load_lesson(WRONG)
    outcomes = StepRunner(lesson.steps[0], seed=lesson.seed).run()
    assert [o.cell_id for o in outcomes] == [
        "double",
        "double-wrong-1",
        "double-wrong-2",
        "double-wrong-3",
        "after",
    ]
    by_id = {o.cell_id: o for o in outcomes}
    assert by_id["double"].status is Status.PASSED
    assert by_id["double-wrong-1"].status is Status.PASSED
    accepted = by_id["double-wrong-2"]
    assert (accepted.status, accepted.line) == (Status.FAILED, 30)
    assert accepted.message == (
        "the check of exercise 'double' accepts this wrong answer: tighten the check, "
        "or fix the wrong answer"
    )
    other = by_id["double-wrong-3"]
    assert (other.status, other.line) == (Status.FAILED, 40)
    assert other.message == (
        "the check rejects this wrong answer with 'AssertionError: double(2) is 6, it should "
        "be 4', not with a message holding 'is 8': change the check's message, or expect="
    )


def test_wrong_answers_leave_no_trace_for_the_cells_below() -> None:
    """The cell after the exercise sees the solution, no name a wrong answer bound, and the
    seeded generator where it would be without wrong answers."""
    lesson = load_lesson(WRONG)
    step = lesson.steps[0]
    bare = replace(step, exercises=tuple(replace(e, wrong=()) for e in step.exercises))
    printed = [StepRunner(s, seed=lesson.seed).run()[-1].output.stdout for s in (step, bare)]
    assert printed[0] == printed[1]
    assert printed[0].startswith("10 False ")


def test_wrong_answers_of_a_skipped_exercise_are_skipped() -> None:
    lesson = load_lesson(WRONG)
    step = lesson.steps[0]
    parts = tuple(
        replace(p, no_ci="needs a GPU") if getattr(p, "id", "") == "double" else p
        for p in step.parts
    )
    outcomes = StepRunner(replace(step, parts=parts), seed=lesson.seed).run()
    assert [o.cell_id for o in outcomes][:4] == [
        "double",
        *(f"double-wrong-{n}" for n in (1, 2, 3)),
    ]
    assert [o.status for o in outcomes[:4]] == [Status.SKIPPED] * 4
    assert outcomes[1].message == "skipped: exercise 'double' did not run"
