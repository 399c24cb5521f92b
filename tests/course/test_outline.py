"""course.yaml: parts and numbered chapters, and every mistake of it at FILE:LINE."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from promptdojo.cli import app
from promptdojo.course.outline import read_course
from promptdojo.course.validate import validate
from tests.support.course import make_course


def test_the_course_file_gives_parts_chapters_and_lessons_in_order(tmp_path: Path) -> None:
    course = read_course(make_course(tmp_path))
    assert course is not None
    assert course.problems == ()
    assert course.title == "A test course"
    assert [p.title for p in course.parts] == ["First things", "Then knobs"]
    assert [(c.number, c.title, c.lessons) for c in course.chapters] == [
        (3, "Where code runs", ("hello",)),
        (7, "Turning knobs", ("knobs",)),
    ]
    assert course.order == ("hello", "knobs")


def test_without_a_course_file_there_is_none(tmp_path: Path) -> None:
    assert read_course(make_course(tmp_path, course_file=False)) is None
    assert validate([tmp_path / "lessons"]).ok


def test_validate_reports_each_course_mistake_at_its_line(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    (lessons / "course.yaml").write_text(
        "title: T\n"  # 1
        "parts:\n"  # 2
        "  - title: P\n"  # 3
        "    chapters:\n"  # 4
        "      - number: 1\n"  # 5
        "        title: One\n"  # 6
        "        lessons:\n"  # 7
        "          - hello\n"  # 8
        "          - helo\n"  # 9
        "          - hello\n"  # 10
        "      - number: 2\n"  # 11
        "        title: Two\n"  # 12
        "        lessons: []\n"  # 13
    )
    result = validate([lessons])
    found = [str(d) for d in result.diagnostics]
    course = lessons / "course.yaml"
    assert (
        f"{course}:9: listed lesson 'helo' does not exist: the closest lesson ids: hello" in found
    )
    assert any(line.startswith(f"{course}:10: lesson 'hello' is listed twice") for line in found)
    assert any(line.startswith(f"{course}:11: chapter 2 has no lessons") for line in found)
    assert len(found) == 3, found
    warnings = [str(w) for w in result.warnings]
    assert warnings == [
        f"{lessons / 'knobs' / 'lesson.yaml'}:1: no chapter of {course} lists lesson 'knobs': "
        "add it under a chapter's `lessons:` (it is shown after the listed lessons)"
    ]


def test_unknown_keys_and_a_chapter_without_a_number_are_reported(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    (lessons / "course.yaml").write_text(
        "title: T\nparts:\n  - title: P\n    chapter:\n      - title: x\n"
    )
    found = [str(d) for d in validate([lessons]).diagnostics]
    assert any("course.yaml:4: unknown key 'chapter' in a part: did you mean" in f for f in found)


def test_new_lists_the_new_lesson_in_the_course_file(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    result = CliRunner().invoke(app, ["new", "serving", "--dir", str(lessons)])
    assert result.exit_code == 0, result.output
    assert f"listed serving in {lessons / 'course.yaml'}" in result.output
    course = read_course(lessons)
    assert course is not None
    assert course.chapters[-1].lessons == ("knobs", "serving")
    assert "          - knobs\n          - serving\n" in (lessons / "course.yaml").read_text()
    assert validate([lessons]).ok


def test_the_shipped_course_lists_its_lessons_in_chapter_44() -> None:
    course = read_course(Path(__file__).resolve().parents[2] / "lessons")
    assert course is not None
    assert course.problems == ()
    assert [(c.number, c.lessons) for c in course.chapters] == [
        (44, ("decoding-kv-cache-quantization", "serving"))
    ]
