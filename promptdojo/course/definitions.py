"""Which cell defines each name, so that a NameError can say where the name comes from.

A learner who runs a cell before the one that imports ``draw_counts`` gets
``NameError: name 'draw_counts' is not defined``. The page adds which cell defines it: one of
this step's cells (run it first), or a cell of an earlier step (each step has a namespace of
its own, so the name must be defined again here). The server reads the names each visible cell
binds at its top level (assignments, imports, ``def``, ``class``, loop and ``with`` targets) and
sends the map with the step (``static/js/page/order.js`` reads it).
"""

from __future__ import annotations

import ast
from functools import lru_cache
from typing import TypedDict

from promptdojo.course.model import Lesson, Step


class Definition(TypedDict):
    """Where a name is first bound: the cell's id, its step's number and title."""

    cell: str
    step: int
    title: str


def _targets(node: ast.AST) -> set[str]:
    """The plain names an assignment target binds (``a``, ``a, (b, *c)``)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Binder(ast.NodeVisitor):
    """Collects the names a module's top level binds; does not enter functions or classes."""

    def __init__(self) -> None:
        self.names: dict[str, None] = {}

    def _add(self, names: set[str] | list[str]) -> None:
        for name in sorted(names) if isinstance(names, set) else names:
            self.names.setdefault(name, None)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._add([node.name])

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._add([node.name])

    def visit_Lambda(self, node: ast.Lambda) -> None:
        pass

    def visit_Import(self, node: ast.Import) -> None:
        self._add([(a.asname or a.name).split(".")[0] for a in node.names])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self._add([a.asname or a.name for a in node.names if a.name != "*"])

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._add(_targets(target))
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._add(_targets(node.target))
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)  # it needs the name already: it does not define it

    def visit_For(self, node: ast.For) -> None:
        self._add(_targets(node.target))
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        if node.optional_vars is not None:
            self._add(_targets(node.optional_vars))
        self.generic_visit(node)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self._add([node.target.id])
        self.generic_visit(node)

    def visit_ListComp(self, node: ast.AST) -> None:
        pass  # a comprehension's variables are its own

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def bound_names(code: str) -> tuple[str, ...]:
    """The names ``code`` binds at its top level, in order (a cell that does not parse: none)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    binder = _Binder()
    binder.visit(tree)
    return tuple(binder.names)


def _first_definitions(step: Step) -> dict[str, Definition]:
    cells = tuple((cell.id, cell.code) for cell in step.cells)
    return _definitions_of(str(step.path), step.number, step.title, cells)


@lru_cache(maxsize=1024)
def _definitions_of(
    path: str, number: int, title: str, cells: tuple[tuple[str, str], ...]
) -> dict[str, Definition]:
    """Where each name the step's ``cells`` bind is first bound, kept per step file and code:
    each step page lists the names of every earlier step's cells, so without it a lesson's
    cells are parsed again for each step after theirs (an export renders them all). Callers
    read it, never change it."""
    found: dict[str, Definition] = {}
    for cell_id, code in cells:
        for name in bound_names(code):
            found.setdefault(name, {"cell": cell_id, "step": number, "title": title})
    return found


def step_definitions(lesson: Lesson, step: Step) -> dict[str, Definition]:
    """Each name a visible cell of ``step`` or of an earlier step binds, and where: this step's
    first cell binding it, else the latest earlier step's."""
    found: dict[str, Definition] = {}
    for earlier in lesson.steps[: step.number - 1]:
        found.update(_first_definitions(earlier))
    found.update(_first_definitions(step))
    return found
