"""Links between lessons, steps, headings and cells: checked at FILE:LINE, moved below a base."""

from __future__ import annotations

from pathlib import Path

from promptdojo.course.links import rewrite_links
from promptdojo.course.parse import read_lesson
from promptdojo.course.validate import validate
from tests.support.course import make_course


def test_valid_links_pass_and_headings_get_anchors(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    assert validate([lessons]).ok
    step = read_lesson(lessons / "hello").steps[0]
    assert ("further-on", "Further on") in step.headings
    assert [link.target for link in step.links] == [
        "lesson:knobs",
        "lesson:knobs/2",
        "lesson:knobs/2#plain",
        "/lessons/hello/3#double",
        "lesson:hello/1#further-on",
    ]
    assert all(link.location.line == 22 for link in step.links)


def test_missing_targets_are_reported_at_their_line_with_the_closest_names(
    tmp_path: Path,
) -> None:
    lessons = make_course(tmp_path)
    step = lessons / "knobs" / "01-knobs.md"
    lines = step.read_text().splitlines()
    text = "\n".join(lines) + (
        "\n\nSee [a](lesson:helo) and\n[b](lesson:hello/9),\n[c](lesson:hello/3#doubel).\n"
    )
    step.write_text(text)
    first = len(lines) + 2
    found = [str(d) for d in validate([lessons]).diagnostics]
    assert found == [
        f"{step}:{first}: link to a missing lesson 'helo': the closest: hello",
        f"{step}:{first + 1}: link to a missing step 9 of 'hello': it has steps 1 to 3",
        f"{step}:{first + 2}: link to a missing cell or heading 'doubel' of hello/3: "
        "the closest: double",
    ]


def test_links_in_hints_are_checked_at_their_line(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    step = lessons / "hello" / "03-exercise.md"
    text = step.read_text()
    hint = "```markdown {.hint for=double}\nMultiplication is allowed.\n```\n"
    assert hint in text
    linked = hint.replace(
        "allowed.", "allowed.\nSee [a step](lesson:knobs/9)\nand [a](lesson:hello/2)."
    )
    step.write_text(text.replace(hint, linked))
    line = text[: text.index(hint)].count("\n") + 3  # the link's line in the file
    found = [str(d) for d in validate([lessons]).diagnostics]
    assert found == [f"{step}:{line}: link to a missing step 9 of 'knobs': it has steps 1 to 2"]
    read = read_lesson(lessons / "hello").steps[2]
    assert [(link.target, link.location.line) for link in read.links] == [
        ("lesson:knobs/9", line),
        ("lesson:hello/2", line + 1),
    ]


def test_validating_one_lesson_leaves_links_into_the_others_alone(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    assert validate([lessons / "hello"]).ok


def test_links_are_written_below_the_base_with_cells_as_their_elements() -> None:
    html = '<a href="lesson:knobs/2#plain">x</a> <a href="lesson:hello">y</a> <a href="/x">z</a>'

    def step_url(lesson: str, number: int) -> str:
        return f"/course/lessons/{lesson}/{number}/"

    written = rewrite_links(html, step_url, lambda lesson, step: {"plain"})
    assert written == (
        '<a href="/course/lessons/knobs/2/#cell-plain">x</a> '
        '<a href="/course/lessons/hello/1/">y</a> <a href="/x">z</a>'
    )
