"""Which cells above a cell its run needs (promptdojo.course.needs): the reading of names, and,
for every cell of the real lessons, the proof that running only those first gives the output
that running every cell above it gives, through the real checker."""

from __future__ import annotations

import contextlib
import io
from dataclasses import replace
from pathlib import Path

import pytest

from promptdojo.checking.judge import StepRunner
from promptdojo.course import discover, load_lesson
from promptdojo.course.model import Cell, Lesson, Step
from promptdojo.course.needs import needed_cells, uses
from promptdojo.course.parse import read_lesson

ROOT = Path(__file__).resolve().parents[2]


def step_of(tmp_path: Path, cells: dict[str, str], extra: str = "") -> Step:
    folder = tmp_path / "l"
    folder.mkdir()
    (folder / "lesson.yaml").write_text('id: needs\ntitle: Needs\nchapter: "ch 0"\n')
    fences = "".join(f"```python {{#{i}}}\n{code}\n```\n\n" for i, code in cells.items())
    (folder / "01-a.md").write_text(f"---\ntitle: A\n---\n\n{fences}{extra}")
    lesson = read_lesson(folder, None)
    assert lesson.problems == (), lesson.problems
    return lesson.steps[0]


def test_a_cell_reads_and_changes_the_names_its_syntax_shows() -> None:
    found = uses("import numpy as np\nresults['a'] = f(x)\nfor v in gen:\n    print(v, n)\n")
    assert found.reads >= {"results", "f", "x", "gen", "n"}
    assert found.changes >= {"np", "results", "x", "gen", "v"}
    assert "n" not in found.changes  # print only reads its arguments
    assert not found.opaque
    method = uses("np.random.seed(0)\nmodel.quantized('Q8_0')\ncounter += 1\n")
    assert method.changes >= {"np", "model", "counter"}
    fresh = uses("f(x).append(1)\nprint(len(y))\nfor i in range(n):\n    pass\n")
    assert fresh.changes == {"f", "x", "i"}  # f may return what it keeps; range's result is new
    matched = uses("match p:\n    case {'x': px, **rest}:\n        pass\n")
    assert matched.changes >= {"px", "rest"}
    looped = uses("for k in d.keys():\n    pass\nfor x in iter(g):\n    pass\n")
    assert looped.changes >= {"d", "g"}  # a method called on d; iter, no builtin that only reads


@pytest.mark.parametrize(
    "code", ["exec('a = 1')", "globals()['a'] = 1", "from math import *", "def (:"]
)
def test_code_whose_names_no_syntax_shows_reads_and_changes_everything(code: str) -> None:
    assert uses(code).opaque


def test_a_cell_needs_the_cells_that_bind_or_change_what_it_reads(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {
            "data": "results = {'a': 1}",
            "more": "results['b'] = 2",
            "other": "n = 8",
            "plot": "print(sorted(results))",
            "alone": "print(3 * 4)",
            "uses-n": "total = n * 2",
        },
    )
    needs = needed_cells(step)
    assert needs["plot"] == ["data", "more"]  # the change to results too, not just its binding
    assert needs["alone"] == []
    assert needs["uses-n"] == ["other"]
    assert needs["data"] == []


def test_a_change_through_a_name_sharing_the_object_changes_it(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {
            "make": "a = []",
            "alias": "b = a",
            "grow": "b.append(1)",
            "view": "row = grid[0]",
            "other": "c = 2",
            "show": "print(a)",
        },
    )
    assert needed_cells(step)["show"] == ["make", "alias", "grow"]


def test_a_name_the_cell_binds_before_reading_it_needs_no_cell_above(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {
            "first": "s = [1]",
            "grow": "s.append(2)",
            "loop": "for s in [[3]]:\n    print(s)",
            "rebind": "s = [4]\nprint(s)",
            "after-loop": "for s in []:\n    pass\nprint(s)",
            "one-branch": "if len('a') > 5:\n    s = [5]\nprint(s)",
        },
    )
    needs = needed_cells(step)
    assert needs["loop"] == []  # the loop binds s before its body reads it
    assert needs["rebind"] == []
    # A loop that never ran, or an if whose other branch did not bind, leaves the old s.
    assert needs["after-loop"] == ["first", "grow", "loop", "rebind"]
    assert needs["one-branch"][:2] == ["first", "grow"]


def test_names_share_objects_through_the_cells_above_only(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {
            "make": "a = []\nb = []",
            "grow": "b.append(1)",
            "show": "print(a)\nb = [0]\nb.append(a)",  # its own b, and tied to a after the read
            "tie": "a = b",
            "show-again": "print(a)",
        },
    )
    needs = needed_cells(step)
    assert needs["show"] == ["make"]  # "grow" changed b, which a shares with only later
    assert needs["show-again"] == ["make", "grow", "show", "tie"]


def _shown(cells: list[str]) -> str:
    """What running ``cells`` in order, in one namespace, prints (or the error it ends with)."""
    out, namespace = io.StringIO(), {}
    try:
        with contextlib.redirect_stdout(out):
            for code in cells:
                exec(code, namespace)  # the cells of a test step
    except Exception as exc:  # the pressed cell's error is its output too
        out.write(f"{type(exc).__name__}: {exc}")
    return out.getvalue()


@pytest.mark.parametrize(
    "cells",
    [
        # a module is every cell's: re-importing it keeps what a cell above did to it
        ["import random\nrandom.seed(0)", "import random\nprint(random.random())"],
        # a context manager may swallow the failure to bind its target
        [
            "a = 'from above'",
            "from contextlib import suppress\nwith suppress(TypeError) as (a, b):\n"
            "    pass\nprint(a)",
        ],
        # a function's global statement rebinds a name the cell bound before calling it
        ["def restore():\n    global x\n    x = y", "y = [1]", "x = None\nrestore()\nprint(x)"],
        # a method called through an instance, a function through an alias
        ["class K:\n    def m(self):\n        return g", "k = K()", "g = 5", "print(k.m())"],
        ["def f():\n    return g", "h = f", "g = 1", "print(h())"],
        # what a function is given may end up in what its body changes, and what it returns
        # may be what its body reads
        [
            "store = []\ndef keep(v):\n    store.append(v)",
            "b = []\nkeep(b)",
            "b.append(1)",
            "print(store)",
        ],
        ["a = [0]", "def get():\n    return a", "b = get()", "b.append(1)", "print(a)"],
        # a name imported once and assigned later is a cell's name like any other
        ["from os import sep as b", "a = []\nb = a", "b.append(1)", "print(a)"],
    ],
)
def test_running_only_the_needed_cells_shows_what_running_all_shows(
    tmp_path: Path, cells: list[str]
) -> None:
    step = step_of(tmp_path, {f"c{i}": code for i, code in enumerate(cells)})
    pressed = f"c{len(cells) - 1}"
    needed = [int(c[1:]) for c in needed_cells(step)[pressed]]
    assert _shown([cells[i] for i in needed] + cells[-1:]) == _shown(cells), needed


def test_imported_names_and_builtins_share_no_object(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {
            "imports": "from math import pi",
            "a": "a = [pi, len('ab')]",
            "b": "b = [pi, len('abc')]",
            "grow": "a.append(1)",
            "show": "print(b)",
        },
    )
    assert needed_cells(step)["show"] == ["imports", "b"]


def test_calls_on_a_name_no_call_changes_change_nothing(tmp_path: Path) -> None:
    """lesson.yaml's ``unchanged_by_calls``: calling a method on such a name or passing it to a
    call no longer counts as changing it, and it shares no object with what it meets; binding it
    or storing into it still does."""
    step = step_of(
        tmp_path,
        {
            "make": "model = Model()",
            "generate": "text = model.generate(8)",
            "pass": "counter = count(model, tok)",
            "store": "model.name = 'small'",
            "show": "print(model.forward(3))",
            "rebind": "model = Model()",
            "again": "print(model.forward(4))",
        },
    )
    assert needed_cells(step)["show"] == ["make", "generate", "pass", "store"]
    needs = needed_cells(step, ["model", "tok"])
    assert needs["show"] == ["make", "store"]
    assert needs["again"] == ["make", "store", "rebind"]
    assert uses("model.generate(8)", frozenset({"model"})).changes == frozenset()


def test_names_local_to_a_function_or_a_comprehension_are_not_the_cells_names(
    tmp_path: Path,
) -> None:
    """A loop variable inside a function, a parameter, a comprehension's target: each is the
    scope's own, so the set-up's ``show`` looping ``name`` over ``results`` does not tie the
    cells' ``name`` to ``results``; a change made through a local alias still counts."""
    setup = (
        "```python {.setup}\n"
        "def show(rows):\n    for name, value in rows.items():\n        print(name, value)\n"
        "```\n\n"
    )
    step = step_of(
        tmp_path,
        {
            "data": "results = {'a': 1}",
            "more": "results['b'] = 2",
            "squares": "squares = [name * 2 for name in range(3)]",
            "alias": "def grow():\n    r = results\n    r['c'] = 3\n",
            "label": "name = 'x'",
            "shout": "print(name.upper())",
            "plot": "show(results)",
        },
        setup,
    )
    needs = needed_cells(step)
    assert needs["shout"] == ["label"]
    assert needs["plot"] == ["data", "more", "alias"]
    found = uses("def f(x):\n    y = x + z\n    return y\n")
    assert found.reads == {"z", "f@1:0.x", "f@1:0.y"}
    assert found.changes == {"f", "f@1:0.y"}


@pytest.mark.parametrize(
    ("binds", "reads"),
    [
        ("k = 5", "f = lambda x, k=k: x + k\nprint(f(1))"),  # a default: read where it is made
        ("scale = 3", "def times(x, scale=scale):\n    return x * scale\nprint(times(2))"),
        ("deco = print", "@deco\ndef show(deco):\n    pass"),  # a decorator, likewise
        ("x = [1, 2]", "print([x * 2 for x in x])"),  # the first iterable: the enclosing scope
        (
            "x = 10",
            "def outer():\n    x = 1\n    def inner():\n        global x\n"
            "        return x\n    return inner()\nprint(outer())",
        ),
    ],
)
def test_a_scope_reads_the_cells_names_where_python_does(
    tmp_path: Path, binds: str, reads: str
) -> None:
    step = step_of(tmp_path, {"a": binds, "b": reads})
    assert needed_cells(step)["b"] == ["a"]


def test_a_change_through_what_a_function_returned_still_counts(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {"a": "rows = [[1], [2, 3]]", "b": "max(rows, key=len).append(9)", "c": "print(rows)"},
    )
    assert needed_cells(step)["c"] == ["a", "b"]


@pytest.mark.parametrize(
    "change",
    [
        "emb = model.w\nemb['e'] = 0",  # through a name an assignment made share it
        "model.cache.append(1)",  # a method of a part of it
        "setattr(model, 'n', 5)",  # setattr exists to change what it is given
    ],
)
def test_what_unchanged_by_calls_leaves_changed(tmp_path: Path, change: str) -> None:
    step = step_of(
        tmp_path, {"make": "model = Model()", "change": change, "show": "print(model.w)"}
    )
    assert needed_cells(step, ["model"])["show"] == ["make", "change"]


def test_a_call_does_what_the_body_of_the_function_called_does(tmp_path: Path) -> None:
    """``add(3)`` changes ``items`` when ``add`` appends to it, also through another function,
    and ``bump()`` changes the global it declares."""
    step = step_of(
        tmp_path,
        {
            "make": "items = []\ntotal = 0",
            "define": "def add(v):\n    items.append(v)\n\ndef twice(v):\n    add(v)\n    add(v)",
            "bump": "def bump():\n    global total\n    total += 1",
            "call": "twice(3)",
            "count": "bump()",
            "other": "z = 1",
            "show": "print(items, total)",
        },
    )
    needs = needed_cells(step)
    assert needs["show"] == ["make", "define", "bump", "call", "count"]
    assert needs["call"] == ["make", "define"]


def test_what_a_needed_cell_reads_is_needed_too(tmp_path: Path) -> None:
    step = step_of(tmp_path, {"a": "x = 1", "b": "y = x + 1", "c": "z = 5", "d": "print(y)"})
    assert needed_cells(step)["d"] == ["a", "b"]


def test_a_cell_that_reaches_every_name_needs_every_cell_above(tmp_path: Path) -> None:
    step = step_of(
        tmp_path,
        {
            "a": "x = 1",
            "b": "y = 2",
            "c": "print(globals().get('x'))",
            "d": "print(w)",
            "e": "w = 3",
        },
    )
    needs = needed_cells(step)
    assert needs["c"] == ["a", "b"]
    assert needs["d"] == ["a", "b", "c"]  # c may bind w, and needs what it reads: everything
    assert needs["e"] == []  # it reads nothing


def test_an_exercise_needs_what_its_check_reads(tmp_path: Path) -> None:
    exercise = (
        "```python {#ex .exercise}\nanswer = None\n```\n\n"
        "```python {.check for=ex}\nassert answer == total\n```\n\n"
        "```python {.solution for=ex}\nanswer = total\n```\n"
    )
    step = step_of(tmp_path, {"base": "total = 3", "unrelated": "k = 1"}, exercise)
    assert needed_cells(step)["ex"] == ["base"]


def _lessons() -> list[Lesson]:
    return [load_lesson(folder) for folder in discover(ROOT / "lessons")]


def _runner(lesson: Lesson, step: Step) -> StepRunner:
    numpy = "numpy" in lesson.packages
    return StepRunner(step, lesson.time_limit, seed=lesson.seed, numpy=numpy)


def _only(step: Step, keep: set[str]) -> Step:
    parts = tuple(p for p in step.parts if not isinstance(p, Cell) or p.id in keep)
    exercises = tuple(e for e in step.exercises if e.id in keep)
    return replace(step, parts=parts, exercises=exercises)


@pytest.mark.parametrize("lesson", _lessons(), ids=lambda lesson: lesson.id)
def test_every_lesson_cell_shows_the_same_after_only_its_needed_cells(lesson: Lesson) -> None:
    """The real checker runs each step in order; then, for each cell, a fresh namespace runs the
    step's set-up, only the cells it needs, and the cell: its verdict and output are the same."""
    for step in lesson.steps:
        full = {o.cell_id: o for o in _runner(lesson, step).run()}
        for cell_id, needed in needed_cells(step, lesson.unchanged_by_calls).items():
            alone = {o.cell_id: o for o in _runner(lesson, _only(step, {*needed, cell_id})).run()}
            got, want = alone[cell_id], full[cell_id]
            where = f"{lesson.id}/{step.number}/{cell_id} after {needed}"
            assert (got.status, got.message) == (want.status, want.message), where
            assert got.output == want.output, where
