"""``promptdojo validate`` finds lesson folders under any path and reports every mistake."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from promptdojo.cli import app
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


def _hello_with_records(tmp_path: Path, records: dict[str, str]) -> Path:
    folder = tmp_path / "hello"
    shutil.copytree(FIXTURE_LESSONS / "hello", folder)
    for name, text in records.items():
        (folder / "recorded" / name).write_text(text, encoding="utf-8")
    return folder


CONFLICTED = '{\n<<<<<<< HEAD\n "cell-1": {}\n=======\n "cell-2": {}\n>>>>>>> theirs\n}\n'


def test_a_broken_record_is_a_warning_and_conflict_markers_are_an_error(tmp_path: Path) -> None:
    folder = _hello_with_records(
        tmp_path, {"01-where-am-i.json": "[]\n", "03-exercise.json": CONFLICTED}
    )
    result = validate([folder])
    assert [lesson.id for lesson in result.lessons] == ["hello"]  # the lesson itself is fine
    assert [str(w.location) for w in result.warnings] == [f"{folder}/recorded/01-where-am-i.json:1"]
    assert [str(d.location) for d in result.diagnostics] == [
        f"{folder}/recorded/03-exercise.json:2"
    ]
    assert "merge-conflict markers" in result.diagnostics[0].message


def test_the_command_prints_warnings_and_fails_only_on_errors(tmp_path: Path) -> None:
    folder = _hello_with_records(tmp_path, {"01-where-am-i.json": '{"cell-1": {"value": "42"}}'})
    done = CliRunner().invoke(app, ["validate", str(folder)])
    assert done.exit_code == 0, done.output
    assert (
        f"warning: {folder}/recorded/01-where-am-i.json:1: the record is in the wrong shape at "
        "cell-1/value" in done.output
    )
    assert "1 lesson valid, 0 problems, 1 warning" in done.output
    (folder / "recorded" / "01-where-am-i.json").write_text(CONFLICTED)
    done = CliRunner().invoke(app, ["validate", str(folder)])
    assert done.exit_code == 1
    assert f"{folder}/recorded/01-where-am-i.json:2: the record has merge-conflict" in done.output


def test_validate_reuses_the_lessons_that_did_not_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptdojo.course import validate as validation
    from tests.support.course import make_course

    lessons = make_course(tmp_path)
    cache = tmp_path / "parsed"
    assert validation.validate([lessons], cache=cache).ok
    parsed: list[Path] = []
    from promptdojo.course import parse

    real = parse.read_lesson
    monkeypatch.setattr(
        parse, "read_lesson", lambda folder, *rest: parsed.append(folder) or real(folder, *rest)
    )
    again = validation.validate([lessons], cache=cache)
    assert again.ok
    assert [lesson.id for lesson in again.lessons] == ["hello", "knobs"]
    assert parsed == []  # nothing changed: nothing parsed
    step = lessons / "knobs" / "02-next.md"
    step.write_text(step.read_text() + "\n```python\nif x\n```\n")
    changed = validation.validate([lessons], cache=cache)
    assert parsed == [lessons / "knobs"]  # only the lesson whose file changed
    assert [d.location.path for d in changed.diagnostics] == [step]


def test_a_fresh_clone_with_the_cache_restored_parses_only_what_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache names what it keeps by the files' contents: a new checkout at the same path
    (new inodes and times, as a CI job that restores the cache folder gets) parses nothing
    again, and a file whose bytes changed is parsed again even with its old size and times."""
    from promptdojo.course import parse
    from promptdojo.course import validate as validation
    from tests.support.course import make_course

    lessons = make_course(tmp_path)
    cache = tmp_path / "parsed"
    assert validation.validate([lessons], cache=cache).ok
    shutil.copytree(lessons, tmp_path / "clone", copy_function=shutil.copy)  # new times
    shutil.rmtree(lessons)
    (tmp_path / "clone").rename(lessons)
    parsed: list[Path] = []
    real = parse.read_lesson
    monkeypatch.setattr(
        parse, "read_lesson", lambda folder, *rest: parsed.append(folder) or real(folder, *rest)
    )
    assert validation.validate([lessons], cache=cache).ok
    assert parsed == []
    step = sorted((lessons / "hello").glob("0*.md"))[0]
    info = step.stat()
    text = step.read_text()
    step.write_text(text[:-1] + "!")  # one byte changed, the size the same
    os.utime(step, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert step.stat().st_size == info.st_size
    validation.validate([lessons], cache=cache)
    assert parsed == [lessons / "hello"]


GIVEAWAY = """---
title: Temperature
---

```python {#guess .exercise}
prediction = 1.0
```

```python {.check for=guess}
assert prediction != 1.0, "move it"
assert abs(prediction - 0.36) < 0.01, f"at {prediction} it is too flat; try 0.36"
if prediction < 0:
    raise AssertionError("temperatures are positive; keep it above 0")
```

```markdown {.hint for=guess}
Solve `0.6 ** (1 / t) == 0.9` for `t`.
```

```markdown {.hint for=guess}
Write `prediction = 0.36`.
```

```markdown {.hint for=guess}
Take the logarithm of both sides.
```

```python {.solution for=guess}
prediction = 0.36
```
"""


def test_feedback_that_holds_the_solution_is_a_warning(tmp_path: Path) -> None:
    folder = tmp_path / "temperature"
    folder.mkdir()
    (folder / "lesson.yaml").write_text("id: temperature\ntitle: T\nchapter: c\n")
    (folder / "01-guess.md").write_text(GIVEAWAY)
    result = validate([folder])
    assert result.ok
    step = folder / "01-guess.md"
    assert [str(w) for w in result.warnings] == [
        f"{step}:20: hint 2 of exercise 'guess' gives away the solution's line "
        "`prediction = 0.36`: lead to it instead: name the idea, or a value to try it on",
        f"{step}:11: the check of exercise 'guess' says the solution's answer 0.36: name the "
        "symptom instead (what the learner's code gives, and where)",
    ]


def test_the_shipped_lessons_give_nothing_away() -> None:
    result = validate([ROOT / "lessons"])
    assert result.ok
    assert result.warnings == []


def test_a_step_carries_its_giveaway_warnings_from_the_one_parse(tmp_path: Path) -> None:
    """The giveaway check reads the syntax trees the step's parse made, so its warnings belong
    to the parsed step (and are made in the worker processes that parse a course)."""
    folder = tmp_path / "temperature"
    folder.mkdir()
    (folder / "lesson.yaml").write_text("id: temperature\ntitle: T\nchapter: c\n")
    (folder / "01-guess.md").write_text(GIVEAWAY)
    lesson = validate([folder]).lessons[0]
    assert [w.location.line for w in lesson.steps[0].warnings] == [20, 11]


def test_lessons_parsed_in_processes_report_as_one_process_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A course big enough to be parsed in worker processes: every problem and warning, at the
    same FILE:LINE and in the same order, as when one process reads it all."""
    from promptdojo.course import bulk

    course = tmp_path / "course"
    course.mkdir()
    broken = sorted((ROOT / "tests" / "fixtures" / "malformed").iterdir())
    for index, source in enumerate(broken[: bulk.PARALLEL_FROM] + [MIXED / "hello"] * 4):
        shutil.copytree(source, course / f"l{index:02d}-{source.name}")
    giveaway = course / "l99-temperature"
    giveaway.mkdir()
    (giveaway / "lesson.yaml").write_text("id: temperature\ntitle: T\nchapter: c\n")
    (giveaway / "01-guess.md").write_text(GIVEAWAY)
    started = []
    real = bulk.ProcessPoolExecutor

    class Counted(real):  # type: ignore[misc, valid-type]
        def __init__(self, workers: int | None = None, **options: Any) -> None:
            started.append(workers)
            super().__init__(workers, **options)

    serial = validate([course], jobs=1)
    monkeypatch.setattr(bulk, "ProcessPoolExecutor", Counted)
    parallel = validate([course], jobs=2)
    assert started == [2]
    assert serial.diagnostics
    assert serial.warnings
    assert parallel.report() == serial.report()
