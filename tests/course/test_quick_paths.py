"""The cheaper ways ``validate`` reads a course say what the ways they stand for say: the symbol
table for a cell's syntax, the step's line ends made before markdown-it parses it, and each
lesson's records checked where it is read. And one cheaper way it does not take: libyaml."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
from markdown_it.rules_core.normalize import normalize
from markdown_it.rules_core.state_core import StateCore

from promptdojo.course import bulk, metadata
from promptdojo.course.problems import Report
from promptdojo.course.source import check_syntax, parse_python
from promptdojo.course.steps import _normalized, markdown
from promptdojo.course.validate import validate
from tests.conftest import FIXTURE_LESSONS, ROOT

#: Text libyaml's parser reads without a mistake, and PyYAML's own refuses (found by fuzzing the
#: two against each other): a block scalar's header with a comment but no space, a flow mapping's
#: "?" inside a key.
LIBYAML_ONLY = ["summary: >#x\n", "title: |#\n", "{?null1?}\n"]


@pytest.mark.parametrize("text", LIBYAML_ONLY)
def test_lesson_yaml_is_read_by_pyyaml_own_parser_on_every_machine(text: str) -> None:
    """lesson.yaml and front matter are read by PyYAML's own parser, whether or not libyaml is
    installed: libyaml's (ten times faster) accepts these texts, so the same lesson would be
    valid on one machine and a mistake on another."""
    report = Report()
    assert metadata.load_mapping(text, Path("lesson.yaml"), 1, report, "lesson.yaml") is None
    assert [d.message.startswith("invalid YAML in lesson.yaml") for d in report.items] == [True]


CODE = {
    "fine": "x = 1\nprint(x)\n",
    "a syntax error": "x = (1,\n",
    "return outside a function": "return 1\n",
    "break outside a loop": "break\n",
    "nonlocal at module level": "nonlocal x\n",
    "global after assignment": "x = 1\nglobal x\n",
    "yield outside a function": "yield 1\n",
    "await outside async": "await x\n",
    "duplicate argument": "def f(a, a):\n    pass\n",
    "a future import late": "x = 1\nfrom __future__ import annotations\n",
    "an unknown future": "from __future__ import braces\n",
    "is with a literal": "x = 1\ny = x is 1\n",
    "deep brackets": "x = " + "[" * 10_000 + "]" * 10_000,
    "a long sum": "x = " + " + ".join(["1"] * 100_000),
    "bad indentation": "if x:\npass\n",
    "a tab mix": "if x:\n\tpass\n        pass\n",
}


def _verdict(check, code: str) -> object:
    try:
        check(code)
    except SyntaxError as exc:
        return "SyntaxError", exc.msg, exc.lineno
    return "parses"


@pytest.mark.parametrize("code", list(CODE.values()), ids=list(CODE))
def test_the_syntax_check_says_what_the_parser_says(code: str) -> None:
    """Where the symbol table refuses what the parser takes, the parser's verdict stands (and
    its tree comes back); else the same error at the same line, or none."""
    assert _verdict(check_syntax, code) == _verdict(parse_python, code)
    if _verdict(parse_python, code) == "parses":
        tree = check_syntax(code)
        assert tree is None or ast.dump(tree) == ast.dump(parse_python(code))


@pytest.mark.parametrize(
    "text", ["a\r\nb\rc\n", "\0x\0", "", "x\r", "\r\n\r", "plain\ntext\n", "a\r\r\n\nb"]
)
def test_line_ends_are_made_as_markdown_it_makes_them(text: str) -> None:
    state = StateCore(text, markdown(), {})
    normalize(state)
    assert _normalized(text) == state.src


def test_a_nul_in_a_step_reads_as_markdown_it_would_read_it(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "lesson.yaml").write_text("id: demo\ntitle: Demo\nchapter: c\n")
    (folder / "01-a.md").write_text("---\ntitle: A\n---\nSome\0text.\n\n```python\nx = '\0'\n```\n")
    lesson = validate([folder]).lessons[0]
    assert "Some\ufffdtext." in lesson.steps[0].parts[0].html
    assert lesson.steps[0].cells[0].code == "x = '\ufffd'"


def _course(root: Path, count: int) -> Path:
    course = root / "course"
    course.mkdir()
    for index in range(count):
        shutil.copytree(FIXTURE_LESSONS / "hello", course / f"l{index:02d}")
    return course


def _read(folder: Path) -> object:
    return bulk.read_safely(folder, None)


def _then(folder: Path, made: object) -> tuple[str, str]:
    return folder.name, type(made).__name__


@pytest.mark.parametrize("jobs", [1, 2])
def test_then_runs_on_each_result_read_made_or_kept(tmp_path: Path, jobs: int) -> None:
    """``(result, then(folder, result))`` comes back for each folder, in order, whether the
    folder was read in this process, in a worker, or came from the cache; the cache keeps the
    result alone."""
    folders = sorted(_course(tmp_path, bulk.PARALLEL_FROM).iterdir())
    cache = tmp_path / "cache"
    made = bulk.parse_many(_read, folders, jobs, cache, then=_then)
    assert [extra for _, extra in made] == [(f.name, "Lesson") for f in folders]
    assert [lesson.id for lesson, _ in made] == ["hello"] * len(folders)
    kept = bulk.parse_many(_read, folders, jobs, cache, then=_then)
    assert [extra for _, extra in kept] == [extra for _, extra in made]
    assert [lesson.path for lesson, _ in kept] == folders
    alone = bulk.parse_many(_read, folders, jobs, cache)
    assert [lesson.path for lesson in alone] == folders


def test_a_broken_record_is_reported_from_the_workers(tmp_path: Path) -> None:
    """Records are checked in the processes that read the lessons: a record with conflict
    markers is an error, and another broken one a warning, at their lines, read once or many
    at a time."""
    course = _course(tmp_path, bulk.PARALLEL_FROM)
    recorded = course / "l03" / "recorded"
    recorded.mkdir(exist_ok=True)
    step = sorted((course / "l03").glob("*.md"))[0]
    (recorded / f"{step.stem}.json").write_text('{\n<<<<<<< HEAD\n"a": {}\n}\n')
    other = course / "l07" / "recorded"
    other.mkdir(exist_ok=True)
    (other / f"{step.stem}.json").write_text("[\n1,\n")
    serial = validate([course], jobs=1)
    parallel = validate([course], jobs=2)
    assert [str(d) for d in parallel.diagnostics] == [str(d) for d in serial.diagnostics]
    assert [str(w) for w in parallel.warnings] == [str(w) for w in serial.warnings]
    assert [d.location.line for d in serial.diagnostics] == [2]
    assert [w.location.line for w in serial.warnings] == [3]


def test_the_control_walk_finds_every_node_ast_walk_finds() -> None:
    """Every node of each module of the package, each as often as ast.walk meets it (the
    contexts and operators are shared): the calls of controls are looked for among them."""
    from promptdojo.course.controls import _nodes

    for path in sorted((ROOT / "promptdojo").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        walked = sorted(id(node) for node in ast.walk(tree))
        assert sorted(id(node) for node in _nodes(tree)) == walked, path
