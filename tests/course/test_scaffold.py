"""`promptdojo new` and `new-step` write lessons that validate; `validate` reports and exits."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptdojo.cli import app
from promptdojo.course import load_lesson
from promptdojo.course.scaffold import ScaffoldError, new_lesson, new_step, slugify
from tests.conftest import ROOT

runner = CliRunner()


def test_new_lesson_and_steps_validate(tmp_path: Path) -> None:
    folder = new_lesson(tmp_path, "top-p", title="Top-p: nucleus sampling", chapter="ch 9 · x")
    new_step(folder, 'Why "p"? A: mass')
    new_step(folder, "Min-p")
    lesson = load_lesson(folder)
    assert lesson.title == "Top-p: nucleus sampling"
    assert lesson.chapter == "ch 9 · x"
    assert [s.path.name for s in lesson.steps] == [
        "01-introduction.md",
        "02-why-p-a-mass.md",
        "03-min-p.md",
    ]
    assert lesson.steps[1].title == 'Why "p"? A: mass'
    assert [e.id for e in lesson.steps[0].exercises] == ["add"]


def test_scaffold_refuses_bad_ids_and_existing_lessons(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="not a slug"):
        new_lesson(tmp_path, "Top P")
    new_lesson(tmp_path, "x")
    with pytest.raises(ScaffoldError, match="already exists"):
        new_lesson(tmp_path, "x")
    with pytest.raises(ScaffoldError, match="not a lesson folder"):
        new_step(tmp_path / "nope", "A")


def test_slugify() -> None:
    assert slugify("Top-p, explained!") == "top-p-explained"
    assert slugify("???") == "step"


def test_slugify_drops_apostrophes_instead_of_dashing_them() -> None:
    assert slugify("Keeping the target's distribution") == "keeping-the-targets-distribution"
    assert slugify("The draft’s guess") == "the-drafts-guess"
    assert slugify("Déjà vu") == "deja-vu"


def test_cli_new_new_step_validate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["new", "kv-basics"]).exit_code == 0
    result = runner.invoke(app, ["new-step", "kv-basics", "Paged attention"])
    assert result.exit_code == 0
    assert "lessons/kv-basics/02-paged-attention.md" in result.output
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 0, result.output
    assert "1 lesson valid, 0 problems" in result.output


def test_cli_validate_prints_every_problem_and_fails() -> None:
    corpus = ROOT / "tests" / "fixtures" / "malformed"
    result = runner.invoke(
        app, ["validate", str(corpus / "syntax-error"), str(corpus / "two-kinds")]
    )
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert f"{corpus}/syntax-error/01-a.md:7: Python syntax error in cell 'cell-1'" in lines[0]
    assert f"{corpus}/two-kinds/01-a.md:5: a cell has one kind" in lines[1]
    assert "0 lessons valid, 2 problems" in result.output


def test_cli_validate_names_a_missing_folder(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(tmp_path / "nowhere")])
    assert result.exit_code == 1
    assert f"{tmp_path / 'nowhere'}: no such lesson folder or step file" in result.output


def test_every_command_has_help() -> None:
    for command in (
        [],
        ["serve"],
        ["validate"],
        ["new"],
        ["new-step"],
        ["pyodide"],
        ["pyodide", "fetch"],
    ):
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0, command
        assert "Usage:" in result.output


def test_new_step_takes_a_slug_for_a_long_title(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["new", "kv-basics"]).exit_code == 0
    title = "Paged attention: how vLLM keeps the cache in blocks"
    result = runner.invoke(app, ["new-step", "kv-basics", title, "--slug", "paged"])
    assert result.exit_code == 0, result.output
    step = tmp_path / "lessons" / "kv-basics" / "02-paged.md"
    assert f"created {Path('lessons') / 'kv-basics' / '02-paged.md'}" in result.output
    assert title in step.read_text()
    bad = runner.invoke(app, ["new-step", "kv-basics", "X", "--slug", "Paged Attention"])
    assert bad.exit_code == 1
    assert "--slug 'Paged Attention' cannot name a step file" in bad.output
    assert "'paged-attention'" in bad.output
    assert runner.invoke(app, ["validate", "lessons"]).exit_code == 0
