"""`pytest lessons/`: one item per cell, markdown lines, skips after a failure, xdist, timeout."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]

HELLO = ROOT / "tests" / "fixtures" / "lessons" / "hello"


@pytest.fixture
def lessons(pytester: pytest.Pytester):
    shutil.copytree(HELLO, pytester.path / "lessons" / "hello")
    return pytester


def test_collects_one_item_per_cell_named_file_step_cell(lessons: pytest.Pytester) -> None:
    result = lessons.runpytest_subprocess("lessons", "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    assert ids == [
        "lessons/hello/01-where-am-i.md::1::cell-1",
        "lessons/hello/01-where-am-i.md::1::cell-2",
        "lessons/hello/02-errors.md::2::cell-1",
        "lessons/hello/03-exercise.md::3::cell-1",
        "lessons/hello/03-exercise.md::3::shout",
        "lessons/hello/03-exercise.md::3::oops",
        "lessons/hello/03-exercise.md::3::double",
        "lessons/hello/03-exercise.md::3::network",
    ]


def test_runs_and_reports_the_markdown_line(lessons: pytest.Pytester) -> None:
    result = lessons.runpytest_subprocess("lessons", "-rA")
    result.assert_outcomes(passed=6, failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*lessons/hello/02-errors.md:6: raised: ZeroDivisionError: division by zero",
            ">  7 |     return 1 / x",
            '*File "*lessons/hello/02-errors.md", line 10, in <module>',
            "SKIPPED *no-ci: needs the network, which CI lacks",
        ]
    )


def test_reportinfo_gives_the_markdown_line(lessons: pytest.Pytester) -> None:
    items, _ = lessons.inline_genitems("lessons/hello/02-errors.md")
    path, line, label = items[0].reportinfo()
    assert (path.name, line + 1, label) == ("02-errors.md", 6, "cell cell-1")


def test_later_cells_that_use_a_failed_cells_names_are_skipped(lessons: pytest.Pytester) -> None:
    step = lessons.path / "lessons" / "hello" / "01-where-am-i.md"
    text = step.read_text().replace("import sys", "raise ValueError('x')\nimport sys")
    step.write_text(text.replace("answer = 6 * 7", "answer = len(sys.platform)"))
    result = lessons.runpytest_subprocess("lessons/hello/01-where-am-i.md", "-rs")
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*skipped: it uses sys, missing because cell 'cell-1' failed earlier in this step*"]
    )


def test_independent_cells_still_run_after_a_failure(lessons: pytest.Pytester) -> None:
    step = lessons.path / "lessons" / "hello" / "01-where-am-i.md"
    step.write_text(step.read_text().replace("import sys", "import sys\nraise ValueError('x')"))
    result = lessons.runpytest_subprocess("lessons/hello/01-where-am-i.md", "-rs")
    result.assert_outcomes(failed=1, passed=1)


def test_one_cell_alone_runs_the_cells_above_it(lessons: pytest.Pytester) -> None:
    result = lessons.runpytest_subprocess("lessons/hello/01-where-am-i.md::1::cell-2")
    result.assert_outcomes(passed=1)


def test_works_with_xdist_loadfile(lessons: pytest.Pytester) -> None:
    result = lessons.runpytest_subprocess("lessons", "-n", "2", "--dist", "loadfile")
    result.assert_outcomes(passed=6, failed=1, skipped=1)


def test_works_with_pytest_timeout(lessons: pytest.Pytester) -> None:
    step = lessons.path / "lessons" / "hello" / "02-errors.md"
    step.write_text("---\ntitle: Slow\n---\n\n```python\nwhile True:\n    pass\n```\n")
    result = lessons.runpytest_subprocess("lessons/hello/02-errors.md", "--timeout", "2")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Timeout*"])


def test_an_invalid_lesson_is_a_collection_error(pytester: pytest.Pytester) -> None:
    shutil.copytree(
        ROOT / "tests" / "fixtures" / "malformed" / "syntax-error", pytester.path / "broken"
    )
    result = pytester.runpytest_subprocess("broken")
    result.stdout.fnmatch_lines(["*01-a.md:7: Python syntax error in cell 'cell-1'*"])
    assert result.ret != 0


@pytest.fixture
def wrong(pytester: pytest.Pytester):
    shutil.copytree(
        ROOT / "tests" / "fixtures" / "checking" / "wrong", pytester.path / "lessons" / "wrong"
    )
    return pytester


def test_one_item_per_wrong_answer_right_after_its_exercise(wrong: pytest.Pytester) -> None:
    result = wrong.runpytest_subprocess("lessons", "--collect-only", "-q")
    ids = [line for line in result.outlines if "::" in line]
    step = "lessons/wrong/01-double.md::1::"
    assert ids == [
        f"{step}{name}"
        for name in ("double", "double-wrong-1", "double-wrong-2", "double-wrong-3", "after")
    ]


def test_a_wrong_answer_its_check_accepts_fails_at_its_line(wrong: pytest.Pytester) -> None:
    result = wrong.runpytest_subprocess("lessons", "-rA")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*lessons/wrong/01-double.md:30: the check of exercise 'double' accepts this wrong "
            "answer: tighten the check, or fix the wrong answer",
            "*lessons/wrong/01-double.md:40: the check rejects this wrong answer with "
            "'AssertionError: double(2) is 6, it should be 4', not with a message holding 'is 8'*",
        ]
    )


def test_one_wrong_answer_alone(wrong: pytest.Pytester) -> None:
    result = wrong.runpytest_subprocess("lessons/wrong/01-double.md::1::double-wrong-1")
    result.assert_outcomes(passed=1)
    result = wrong.runpytest_subprocess("lessons/wrong/01-double.md::1::double-wrong-2")
    result.assert_outcomes(failed=1)
