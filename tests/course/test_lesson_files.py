"""Which files of a lesson folder are lesson files, and how they are read: editors' lock, swap
and backup files beside a step never make a good lesson invalid, and a step saved with a byte
order mark reads as any other."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import pytest

from promptdojo.course import load_lesson
from promptdojo.course.parse import read_lesson

META = "id: demo\ntitle: Demo\nchapter: ch 1\n"
STEP = "---\ntitle: A\n---\nSome text.\n\n```python\nprint(1)\n```\n"


def _lesson(folder: Path) -> Path:
    (folder / "lesson.yaml").write_text(META, encoding="utf-8")
    (folder / "01-a.md").write_text(STEP, encoding="utf-8")
    return folder


@pytest.mark.parametrize("name", [".#01-a.md", "._01-a.md", ".01-a.md", "._lesson.md"])
def test_hidden_and_editor_files_beside_a_step_are_not_steps(tmp_path: Path, name: str) -> None:
    folder = _lesson(tmp_path)
    # Emacs' lock is a dangling symbolic link; macOS' ._ file holds binary resource forks.
    if name.startswith(".#"):
        (folder / name).symlink_to("user@host.1234:1700000000")
    else:
        (folder / name).write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X\xff\xfe")
    lesson = load_lesson(folder)
    assert [step.path.name for step in lesson.steps] == ["01-a.md"]


@pytest.mark.parametrize(
    "name",
    [".#01-a.md", "._01-a.md", "#01-a.md#", "01-a.md~", ".01-a.md.swp", "4913", "01-a.md.tmp"],
)
def test_editor_files_are_recognised(name: str) -> None:
    from promptdojo.course.problems import is_editor_file

    assert is_editor_file(name)


@pytest.mark.parametrize("name", ["01-a.md", "lesson.yaml", "02-b-c.md", "10-x.md"])
def test_lesson_files_are_not_editor_files(name: str) -> None:
    from promptdojo.course.problems import is_editor_file

    assert not is_editor_file(name)


@pytest.mark.timeout(20)
def test_a_fifo_named_like_a_step_is_not_read(tmp_path: Path) -> None:
    folder = _lesson(tmp_path)
    os.mkfifo(folder / "02-b.md")  # opening it to read would wait for a writer forever
    lesson = load_lesson(folder)
    assert [step.path.name for step in lesson.steps] == ["01-a.md"]


def test_a_step_saved_with_a_byte_order_mark_has_its_title(tmp_path: Path) -> None:
    folder = _lesson(tmp_path)
    (folder / "01-a.md").write_bytes(codecs.BOM_UTF8 + STEP.encode("utf-8"))
    (folder / "lesson.yaml").write_bytes(codecs.BOM_UTF8 + META.encode("utf-8"))
    lesson = load_lesson(folder)
    assert lesson.title == "Demo"
    assert lesson.steps[0].title == "A"
    assert lesson.steps[0].cells[0].code == "print(1)"


def test_windows_line_ends_read_as_before(tmp_path: Path) -> None:
    folder = _lesson(tmp_path)
    (folder / "01-a.md").write_bytes(STEP.replace("\n", "\r\n").encode("utf-8"))
    lesson = load_lesson(folder)
    assert lesson.steps[0].cells[0].code == "print(1)"
    assert lesson.steps[0].cells[0].location.line == 7


def test_bad_utf8_after_a_byte_order_mark_is_reported_at_its_line(tmp_path: Path) -> None:
    folder = _lesson(tmp_path)
    (folder / "01-a.md").write_bytes(codecs.BOM_UTF8 + b"---\ntitle: A\n---\n\xff\n")
    problems = [str(d) for d in read_lesson(folder).problems]
    assert any("01-a.md:4: file is not valid UTF-8" in p for p in problems), problems
