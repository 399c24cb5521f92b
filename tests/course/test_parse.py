"""The parser: a lesson folder becomes Lesson → Step → Cell, with every mistake at its line."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from promptdojo.course import Cell, LessonError, Prose, load_lesson
from promptdojo.course.parse import read_lesson


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


META = "id: demo\ntitle: Demo\nchapter: ch 1\npackages: [numpy]\ntime_limit: 5\nseed: 3\n"


def test_fixture_lesson_parses_with_cell_lines(fixture_lessons: Path) -> None:
    lesson = load_lesson(fixture_lessons / "hello")
    assert (lesson.id, lesson.title, lesson.chapter) == (
        "hello",
        "Hello, Pyodide",
        "ch 0 · fixtures",
    )
    assert [s.number for s in lesson.steps] == [1, 2, 3]
    first = lesson.steps[0]
    assert first.title == "Where does this code run?"
    cells = first.cells
    assert [c.id for c in cells] == ["cell-1", "cell-2"]
    assert cells[0].code == 'import sys\n\nprint("platform:", sys.platform)'
    # The fence opens on line 7, so the code starts on line 8.
    assert cells[0].location.line == 8
    assert cells[1].location.line == 16
    assert isinstance(first.parts[0], Prose)
    assert isinstance(first.parts[1], Cell)


def test_metadata_fields_are_typed(tmp_path: Path) -> None:
    write(tmp_path, "lesson.yaml", META)
    write(tmp_path, "01-a.md", "---\ntitle: A\n---\ntext\n")
    lesson = load_lesson(tmp_path)
    assert lesson.packages == ("numpy",)
    assert lesson.time_limit == 5.0
    assert lesson.seed == 3
    assert lesson.step(1) is lesson.steps[0]
    assert lesson.step(0) is None
    assert lesson.step(2) is None


def test_every_mistake_is_reported_in_one_run(tmp_path: Path) -> None:
    write(tmp_path, "lesson.yaml", "id: demo\ntitle: [unclosed\n")
    write(tmp_path, "01-a.md", "no front matter\n")
    write(tmp_path, "03-c.md", "---\ntitle: C\n---\n")
    write(tmp_path, "notes.md", "scratch\n")
    with pytest.raises(LessonError) as info:
        load_lesson(tmp_path)
    messages = [str(d) for d in info.value.diagnostics]
    assert any(
        m.startswith(f"{tmp_path / 'lesson.yaml'}:2: invalid YAML in lesson.yaml") for m in messages
    )
    assert f"{tmp_path / '01-a.md'}:1: step has no title" in "\n".join(messages)
    assert any("notes.md: step file name does not start with a step number" in m for m in messages)
    assert any("03-c.md: step number 3 should be 2" in m for m in messages)


def test_non_utf8_step_names_its_line(tmp_path: Path) -> None:
    write(tmp_path, "lesson.yaml", META)
    (tmp_path / "01-a.md").write_bytes(b"---\ntitle: A\n---\nline four \xff\n")
    with pytest.raises(LessonError) as info:
        load_lesson(tmp_path)
    assert [str(d) for d in info.value.diagnostics] == [
        f"{tmp_path / '01-a.md'}:4: file is not valid UTF-8: save it as UTF-8"
    ]


def test_duplicate_step_numbers(tmp_path: Path) -> None:
    write(tmp_path, "lesson.yaml", META)
    write(tmp_path, "01-a.md", "---\ntitle: A\n---\n")
    write(tmp_path, "01-b.md", "---\ntitle: B\n---\n")
    with pytest.raises(LessonError) as info:
        load_lesson(tmp_path)
    assert "duplicate step number 1 (also 01-a.md)" in str(info.value)


def test_every_kind_of_cell(fixture_lessons: Path) -> None:
    step = load_lesson(fixture_lessons / "hello").steps[2]
    assert [c.id for c in step.cells] == ["shout", "oops", "double", "network"]
    assert [c.kind.value for c in step.cells] == ["readonly", "code", "exercise", "code"]
    assert [c.editable for c in step.cells] == [False, True, True, True]
    (setup,) = step.setup
    assert setup.code == 'greeting = "hello"'
    assert setup.location.line == 9
    oops = step.cells[1]
    assert (oops.raises, oops.time_limit) == ("KeyError", 5.0)
    assert step.cells[3].no_ci == "needs the network, which CI lacks"
    (exercise,) = step.exercises
    assert exercise.id == "double"
    assert exercise.starter is step.cells[2]
    assert exercise.check.code.startswith("assert double(2) == 4")
    assert exercise.check.exercise == "double"
    assert [h.html for h in exercise.hints] == [
        "<p>Multiplication is allowed.</p>\n",
        "<p>Twice <code>x</code> is <code>x + x</code>, or a product.</p>\n",
    ]
    assert exercise.solution is not None
    assert "2 * x" in exercise.solution.code
    assert step.exercise("double") is exercise


def test_each_step_is_parsed_once(fixture_lessons: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: Counter[str] = Counter()
    real = MarkdownIt.parse

    def counting(self: MarkdownIt, src: str, env: object = None) -> list:
        parsed[src] += 1
        return real(self, src, env)

    monkeypatch.setattr(MarkdownIt, "parse", counting)
    lesson = read_lesson(fixture_lessons / "hello")
    assert [parsed[step.path.read_text(encoding="utf-8")] for step in lesson.steps] == [1, 1, 1]


def test_with_a_cache_only_the_changed_step_is_read_and_parsed_again(
    fixture_lessons: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import promptdojo.course.steps as steps
    from promptdojo.course.parse import ParseCache

    folder = tmp_path / "hello"
    shutil.copytree(fixture_lessons / "hello", folder)
    cache = ParseCache()
    first = read_lesson(folder, cache=cache)
    read: list[str] = []
    real = steps.read_text
    monkeypatch.setattr(
        steps, "read_text", lambda path, report: read.append(path.name) or real(path, report)
    )
    changed = folder / "02-errors.md"
    changed.write_text(changed.read_text().replace("Errors point at your line", "Edited"))
    second = read_lesson(folder, cache=cache)
    assert read == ["02-errors.md"]
    assert [s.title for s in second.steps] == [first.steps[0].title, "Edited", first.steps[2].title]
    assert second.steps[0].parts is first.steps[0].parts  # the very same parse
    # A file the watcher saw change is read again, even with the same size and times.
    cache.forget([folder / "01-where-am-i.md"])
    read_lesson(folder, cache=cache)
    assert read == ["02-errors.md", "01-where-am-i.md"]


def test_a_changed_lesson_yaml_parses_every_step_again(
    fixture_lessons: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import promptdojo.course.steps as steps
    from promptdojo.course.parse import ParseCache

    folder = tmp_path / "needs-numpy"
    shutil.copytree(fixture_lessons / "needs-numpy", folder)
    cache = ParseCache()
    assert not read_lesson(folder, cache=cache).problems
    meta = folder / "lesson.yaml"
    meta.write_text(meta.read_text().replace("packages: [numpy]", "packages: []"))
    read: list[str] = []
    real = steps.read_text
    monkeypatch.setattr(
        steps, "read_text", lambda path, report: read.append(path.name) or real(path, report)
    )
    # The import rules changed: the step that imports numpy must say it is not declared.
    problems = [d.message for d in read_lesson(folder, cache=cache).problems]
    assert read
    assert any("does not declare the package 'numpy'" in p for p in problems), problems
