"""Mistakes that used to pass validation, each now a FILE:LINE error with a fix."""

from __future__ import annotations

from pathlib import Path

from promptdojo.course.parse import read_lesson


def lesson(tmp_path: Path, step: str, packages: str = "[]") -> Path:
    (tmp_path / "lesson.yaml").write_text(
        f"id: l\ntitle: L\nchapter: c\npackages: {packages}\n", encoding="utf-8"
    )
    (tmp_path / "01-a.md").write_text("---\ntitle: A\n---\n\n" + step, encoding="utf-8")
    return tmp_path


def problems(folder: Path) -> list[str]:
    return [str(d).replace(str(folder) + "/", "") for d in read_lesson(folder, "default").problems]


def test_raises_with_the_wrong_case_or_spelling_gets_did_you_mean(tmp_path: Path) -> None:
    step = (
        '```python {#a raises=valueerror}\nint("x")\n```\n\n'
        '```python {#b raises=ValueErorr}\nint("x")\n```\n\n'
        "```python {#c raises=myerror}\n"
        "class MyError(Exception):\n    pass\n\n\nraise MyError\n```\n"
    )
    assert problems(lesson(tmp_path, step)) == [
        "01-a.md:5: raises='valueerror' is not an exception this step can raise: "
        "did you mean 'ValueError'?",
        "01-a.md:9: raises='ValueErorr' is not an exception this step can raise: "
        "did you mean 'ValueError'?",
        "01-a.md:13: raises='myerror' is not an exception this step can raise: "
        "did you mean 'MyError'?",
    ]


def test_raises_accepts_builtins_step_classes_and_library_names(tmp_path: Path) -> None:
    step = (
        '```python {#a raises=ValueError}\nint("x")\n```\n\n'
        "```python {.setup}\nclass DraftRejected(Exception):\n    pass\n```\n\n"
        "```python {#b raises=DraftRejected}\nraise DraftRejected\n```\n\n"
        "```python {#c raises=LinAlgError}\nraise ArithmeticError\n```\n"
    )
    assert problems(lesson(tmp_path, step)) == []


def test_raw_html_is_reported_at_its_line_with_the_markdown_to_write(tmp_path: Path) -> None:
    step = "The draft x<sub>1</sub> wins.\n\n<div>block</div>\n\nA <!-- note -->.\n"
    assert problems(lesson(tmp_path, step)) == [
        "01-a.md:5: raw HTML (<sub>) is not allowed: it would show as literal text: "
        "write maths instead: $x_1$",
        "01-a.md:7: raw HTML (<div>) is not allowed: it would show as literal text: "
        "use Markdown (**bold**, *italic*, `code`, $maths$)",
        "01-a.md:9: raw HTML (an HTML comment) is not allowed: it would show as literal text: "
        "remove it: comments would show as text",
    ]


def test_code_and_autolinks_are_not_html(tmp_path: Path) -> None:
    step = "Compare `a<b>` and <https://example.org>, and 1 < 2.\n\n```text\n<div>\n```\n"
    assert problems(lesson(tmp_path, step)) == []


def test_py_python3_and_quarto_fences_are_cells(tmp_path: Path) -> None:
    step = "```py\nx = 1\n```\n\n```python3\ny = 2\n```\n\n```{python}\nz = 3\n```\n"
    folder = lesson(tmp_path, step)
    loaded = read_lesson(folder, "default")
    assert loaded.problems == ()
    assert [c.code for c in loaded.steps[0].cells] == ["x = 1", "y = 2", "z = 3"]


def test_a_hint_in_a_python_fence_is_one_problem(tmp_path: Path) -> None:
    step = (
        "```python {#ex .exercise}\nn = 0\n```\n\n```python {.check for=ex}\nassert n\n```\n\n"
        "```python {.hint for=ex}\nUse `len`, then add one.\n```\n"
    )
    assert problems(lesson(tmp_path, step)) == [
        "01-a.md:13: a hint is prose, not python: write it as ```markdown {.hint for=ID}"
    ]


def test_an_unknown_package_gets_the_closest_few_not_the_whole_lock(tmp_path: Path) -> None:
    folder = lesson(tmp_path, "Prose.\n", packages="[transformers, nump]")
    found = problems(folder)
    assert len(found) == 2
    transformers, nump = found
    assert transformers.startswith(
        "lesson.yaml:4: package 'transformers' is not in the pinned Pyodide's pyodide-lock.json: "
        "none of its "
    )
    assert transformers.count(",") < 8, "a few names, never the ~350 of the lock"
    assert nump.endswith("did you mean 'numpy'?")


def test_version_is_retired_with_what_replaced_it(tmp_path: Path) -> None:
    folder = lesson(tmp_path, "Prose.\n")
    yaml = folder / "lesson.yaml"
    yaml.write_text(yaml.read_text() + "version: 2\n")
    assert problems(folder) == [
        "lesson.yaml:5: 'version' is no longer used: remove it: when you change a cell's starter "
        "code, learners who edited that cell are asked whether to keep theirs, without a version "
        "to bump"
    ]
