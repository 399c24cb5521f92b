"""The run-order aids: lesson.yaml's ``run_earlier_cells`` (read and checked) and the map of
which cell defines each name, which the page uses to explain a NameError."""

from __future__ import annotations

from pathlib import Path

from promptdojo.course.definitions import bound_names, step_definitions
from promptdojo.course.parse import read_lesson


def lesson(folder: Path, extra: str = "") -> Path:
    folder.mkdir()
    (folder / "lesson.yaml").write_text(f'id: order\ntitle: Order\nchapter: "ch 0"\n{extra}')
    (folder / "01-a.md").write_text(
        "---\ntitle: First\n---\n\n```python {#imports}\nfrom math import sqrt as root\n"
        "shared = 1\n```\n\n```python {#uses}\nroot(4) + shared\n```\n"
    )
    (folder / "02-b.md").write_text(
        "---\ntitle: Second\n---\n\n```python {#again}\nshared = 2\n"
        "def helper():\n    inner = 3\n```\n"
    )
    return folder


def test_run_earlier_cells_is_on_by_default_and_can_be_turned_off(tmp_path: Path) -> None:
    assert read_lesson(lesson(tmp_path / "on"), None).run_earlier_cells is True
    off = read_lesson(lesson(tmp_path / "off", "run_earlier_cells: false\n"), None)
    assert off.problems == ()
    assert off.run_earlier_cells is False


def test_a_run_earlier_cells_that_is_not_true_or_false_is_reported_at_its_line(
    tmp_path: Path,
) -> None:
    for name, value in (("text", "no way"), ("number", "0")):
        folder = lesson(tmp_path / name, f"run_earlier_cells: {value}\n")
        problems = [str(d) for d in read_lesson(folder, None).problems]
        assert any(
            p.startswith(f"{folder / 'lesson.yaml'}:4: 'run_earlier_cells' must be true or false")
            for p in problems
        ), problems


def test_unchanged_by_calls_is_read_and_each_name_checked_at_its_line(tmp_path: Path) -> None:
    good = read_lesson(lesson(tmp_path / "good", "unchanged_by_calls: [model, tok]\n"), None)
    assert good.problems == ()
    assert good.unchanged_by_calls == ("model", "tok")
    folder = lesson(tmp_path / "bad", "unchanged_by_calls: [model, 2x, class]\n")
    bad = read_lesson(folder, None)
    assert bad.unchanged_by_calls == ("model",)
    problems = [str(d) for d in bad.problems]
    for name in ("'2x'", "'class'"):
        assert any(
            p.startswith(f"{folder / 'lesson.yaml'}:4: unchanged_by_calls lists {name}, which is")
            for p in problems
        ), problems
    text = lesson(tmp_path / "text", "unchanged_by_calls: model\n")
    problems = [str(d) for d in read_lesson(text, None).problems]
    assert any("'unchanged_by_calls' must be a list of Python names" in p for p in problems)


def test_a_bool_is_still_refused_where_a_number_belongs(tmp_path: Path) -> None:
    problems = [str(d) for d in read_lesson(lesson(tmp_path / "l", "seed: true\n"), None).problems]
    assert any("'seed' must be a whole number, not bool" in p for p in problems), problems


def test_bound_names_are_the_top_level_bindings() -> None:
    code = (
        "import numpy as np\nimport os.path\nfrom m import a, b as c\nx, (y, *z) = 1, (2, [3])\n"
        "def f(q):\n    w = 1\nclass C:\n    v = 2\nfor i in range(3):\n    k = i\n"
        "with open('f') as fh:\n    pass\nif True:\n    t: int = 3\n[j for j in range(2)]\n"
        "(n := 5)\ncounter += 1\n"
    )
    assert list(bound_names(code)) == [
        *("np", "os", "a", "c", "x", "y", "z", "f", "C", "i", "k", "fh", "t", "n")
    ]
    assert bound_names("def (:") == ()


def test_definitions_name_this_steps_cell_first_then_the_latest_earlier_step(
    tmp_path: Path,
) -> None:
    read = read_lesson(lesson(tmp_path / "l"), None)
    first, second = read.steps
    assert step_definitions(read, first) == {
        "root": {"cell": "imports", "step": 1, "title": "First"},
        "shared": {"cell": "imports", "step": 1, "title": "First"},
    }
    found = step_definitions(read, second)
    assert found["root"] == {"cell": "imports", "step": 1, "title": "First"}
    assert found["shared"] == {"cell": "again", "step": 2, "title": "Second"}
    assert found["helper"]["cell"] == "again"
    assert "inner" not in found
