"""Hostile or careless input gives a mistake at FILE:LINE, never MemoryError or RecursionError:
YAML aliases, deep nesting and size in lesson.yaml and front matter, and Python nested too deeply
for its parser in a cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdojo.course.parse import read_lesson
from promptdojo.course.validate import validate

META = "id: demo\ntitle: Demo\nchapter: ch 1\n"
STEP = "---\ntitle: A\n---\nSome text.\n"


def _lesson(folder: Path, meta: str = META, step: str = STEP) -> Path:
    (folder / "lesson.yaml").write_text(meta, encoding="utf-8")
    (folder / "01-a.md").write_text(step, encoding="utf-8")
    return folder


def _problems(folder: Path) -> list[str]:
    return [str(d) for d in validate([folder]).diagnostics]


def _laughs(levels: int, width: int) -> str:
    """A "billion laughs": each alias stands for ``width`` copies of the one before."""
    lines = ['a0: &a0 "lol"']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("levels", [5, 9])  # a million values; a billion
def test_an_alias_bomb_in_front_matter_is_refused_at_its_line(tmp_path: Path, levels: int) -> None:
    bomb = _laughs(levels, 10).replace(f"a{levels}:", "title:", 1)
    folder = _lesson(tmp_path, step=f"---\n{bomb}---\ntext\n")
    problems = _problems(folder)
    # The first alias is on the front matter's second line, the file's third.
    assert (
        f"{folder}/01-a.md:3: invalid YAML in front matter: aliases (*name) are not allowed: "
        "write the value out: check indentation and quotes" in problems
    )
    lesson = read_lesson(folder)
    assert lesson.steps[0].title == "A"  # the slug's, not a billion laughs


@pytest.mark.timeout(60)
def test_an_alias_in_lesson_yaml_is_refused_at_its_line(tmp_path: Path) -> None:
    folder = _lesson(tmp_path, meta=META + "x: &x [1, 2]\npackages: *x\n")
    assert any(
        p.startswith(f"{folder}/lesson.yaml:5: invalid YAML in lesson.yaml: aliases")
        for p in _problems(folder)
    ), _problems(folder)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "nested", ["[" * 10_000 + "]" * 10_000, "{a: " * 5_000 + "1" + "}" * 5_000]
)
def test_deeply_nested_yaml_is_refused_at_its_line(tmp_path: Path, nested: str) -> None:
    folder = _lesson(tmp_path, step=f"---\ntitle: A\nsummary: {nested}\n---\ntext\n")
    problems = _problems(folder)
    assert (
        f"{folder}/01-a.md:3: invalid YAML in front matter: values nest more than 32 levels "
        "deep: check indentation and quotes" in problems
    ), problems


def test_front_matter_of_megabytes_is_refused(tmp_path: Path) -> None:
    folder = _lesson(tmp_path, step="---\ntitle: A\nsummary: " + "x" * 200_000 + "\n---\ntext\n")
    assert (
        f"{folder}/01-a.md:2: front matter is 195 KB, more than the 64 KB it may be: keep only "
        "the keys it needs; long text belongs in the step's markdown" in _problems(folder)
    )


def test_a_number_too_long_for_python_is_a_yaml_mistake(tmp_path: Path) -> None:
    folder = _lesson(tmp_path, meta=META + "seed: " + "9" * 5_000 + "\n")
    problems = _problems(folder)
    assert any(
        p.startswith(f"{folder}/lesson.yaml:1: invalid YAML in lesson.yaml:") for p in problems
    )


DEEP_PYTHON = {
    "brackets": "x = " + "[" * 10_000 + "]" * 10_000,
    "parentheses": "x = " + "(" * 10_000 + ")" * 10_000,
    "operators": "x = " + "not " * 10_000 + "True",
    "unary minus": "x = " + "-" * 10_000 + "1",
    "a long sum": "x = " + " + ".join(["1"] * 100_000),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("code", list(DEEP_PYTHON.values()), ids=list(DEEP_PYTHON))
def test_python_nested_too_deeply_is_a_syntax_error_at_the_cell(tmp_path: Path, code: str) -> None:
    step = f"---\ntitle: A\n---\ntext\n\n```python\nimport promptdojo.ui\n{code}\n```\n"
    folder = _lesson(tmp_path, step=step)
    problems = _problems(folder)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"{folder}/01-a.md:")
    assert ": Python syntax error in cell 'cell-1': " in problems[0]
