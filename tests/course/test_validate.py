"""``promptdojo validate`` finds lesson folders under any path and reports every mistake."""

from __future__ import annotations

from pathlib import Path

from promptdojo.course.validate import lesson_folders, validate
from tests.conftest import FIXTURE_LESSONS, ROOT

MIXED = ROOT / "tests" / "fixtures" / "mixed"


def test_a_lesson_folder_or_a_folder_of_lessons() -> None:
    folders, problems = lesson_folders([FIXTURE_LESSONS / "hello", MIXED])
    assert problems == []
    assert folders == [FIXTURE_LESSONS / "hello", MIXED / "broken", MIXED / "hello"]


def test_a_missing_or_empty_folder_is_a_problem(tmp_path: Path) -> None:
    folders, problems = lesson_folders([tmp_path / "nowhere", tmp_path])
    assert folders == []
    assert [p.message for p in problems] == [
        "no such lesson folder or step file",
        "no lessons here",
    ]
    assert problems[1].hint == "no */lesson.yaml under it"


def test_good_lessons_load_and_broken_ones_report_with_their_lines() -> None:
    result = validate([MIXED])
    assert [lesson.id for lesson in result.lessons] == ["hello"]
    assert not result.ok
    assert result.diagnostics
    assert all(d.location.path.is_relative_to(MIXED / "broken") for d in result.diagnostics)


def test_the_fixture_lessons_are_valid() -> None:
    result = validate([FIXTURE_LESSONS])
    assert result.ok, [str(d) for d in result.diagnostics]
    assert len(result.lessons) == 5
