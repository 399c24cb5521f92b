"""What a step's cells import, for the page to import while Python starts."""

from __future__ import annotations

from pathlib import Path

from promptdojo.course.imports import imported_modules, step_imports
from promptdojo.course.model import Cell, CellKind, Exercise, Location, Step


def cell(code: str, kind: CellKind = CellKind.CODE, name: str = "c") -> Cell:
    return Cell(id=name, code=code, location=Location(Path("x.md"), 3), kind=kind)


def test_absolute_imports_in_order_and_nothing_from_a_broken_cell() -> None:
    code = "import numpy as np, json\nfrom promptdojo.decoding import greedy\nfrom . import x\n"
    assert imported_modules(code) == ["numpy", "json", "promptdojo.decoding"]
    assert imported_modules("def f(:\n  import numpy") == []
    nested = "def f():\n    import math\n"
    assert imported_modules(nested) == ["math"]


def test_a_step_lists_safe_modules_once_from_every_kind_of_cell() -> None:
    starter = cell("import collections", CellKind.EXERCISE, "ex")
    step = Step(
        number=1,
        slug="a",
        title="A",
        path=Path("01-a.md"),
        parts=(cell("import numpy\nimport requests\nfrom promptdojo.display import bars"),),
        setup=(cell("import numpy\nimport promptdojo.decoding", CellKind.SETUP, "s"),),
        exercises=(
            Exercise(
                id="ex",
                starter=starter,
                check=cell("import statistics", CellKind.CHECK, "chk"),
                solution=cell("import itertools", CellKind.SOLUTION, "sol"),
            ),
        ),
    )
    # requests is neither a declared package, the library nor the standard library: left out.
    assert step_imports(step, ["numpy"]) == [
        "numpy",
        "promptdojo.decoding",
        "promptdojo.display",
        "statistics",
        "itertools",
    ]
    assert "numpy" not in step_imports(step, [])
