"""Which cells above a cell its run needs first, read from the code as the lesson wrote it.

Running a cell first runs the cells above it that have not run in this Python (``order.js``), so
that no cell fails for a name an earlier one defines. Most cells need only some of those: step 7's
``size`` multiplies two numbers, yet its first run used to score four models first. The server
reads each visible cell's names and sends, for each, the cells above that may bind or change a
name it reads, and those cells' own needs in turn. The page runs only those while the cells are
as written; once the learner edited the cell or one above it, it runs them all, as before.

The reading is conservative: a cell may change a name when it binds it (assignment, ``import``,
``def``, loop target, ``global``), stores into it (``x[k] = v``, ``x.a = v``, ``x += 1``),
calls a method on it or passes it to a call (``x.append(1)``, ``np.random.seed(0)``, ``f(x)``;
the builtins that never change their arguments, like ``print`` and ``len``, aside), or iterates
it (a generator). A cell that reaches names no syntax shows (``exec``, ``globals()``,
``import *``) or does not parse needs, and may change, everything.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from promptdojo.course.model import CellKind, Step

#: Built-in functions that never change their arguments: passing a name to one only reads it.
_READS_ONLY = frozenset(
    (  # noqa: SIM905 (one list of words reads better than 41 lines of them)
        "abs all any ascii bin bool callable chr complex dict divmod enumerate float format "
        "frozenset hasattr hash hex id int isinstance issubclass len list max min oct ord pow "
        "print range repr reversed round set sorted str sum tuple type zip"
    ).split()
)
#: Calls that reach names no syntax shows: a cell making one may read or change any name.
_OPAQUE = frozenset({"exec", "eval", "globals", "locals", "vars", "__import__"})
_CHAINS = (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)


@dataclass(frozen=True)
class Uses:
    """The names a cell may read and those it may bind or change; ``opaque`` when its syntax
    cannot tell (it then reads and changes every name)."""

    reads: frozenset[str] = frozenset()
    changes: frozenset[str] = frozenset()
    opaque: bool = False


_EVERYTHING = Uses(opaque=True)


def _root(node: ast.AST) -> str | None:
    """The name an attribute, subscript or call chain starts from (``a`` of ``a.b[1].c()``)."""
    while isinstance(node, _CHAINS):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _touched(node: ast.AST) -> list[ast.AST] | None:
    """The expressions ``node`` may change in place (None: any name, through ``exec`` and the
    like)."""
    if isinstance(node, ast.Attribute | ast.Subscript) and not isinstance(node.ctx, ast.Load):
        return [node.value]
    if isinstance(node, ast.AugAssign):
        return [node.target]
    if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        return [node.iter]
    if isinstance(node, ast.Starred):
        return [node.value]
    if not isinstance(node, ast.Call):
        return []
    arguments = [*node.args, *(k.value for k in node.keywords)]
    if not isinstance(node.func, ast.Name):
        return [node.func, *arguments]
    if node.func.id in _OPAQUE:
        return None
    return [] if node.func.id in _READS_ONLY else arguments


def uses(code: str) -> Uses:
    """What ``code`` may read and change, at any depth (a function it defines included)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _EVERYTHING
    reads: set[str] = set()
    changes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else changes).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            changes.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return _EVERYTHING
            changes |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Global | ast.Nonlocal):
            changes |= set(node.names)
        touched = _touched(node)
        if touched is None:
            return _EVERYTHING
        # A name changed in place is also read: the change builds on what it held.
        roots = {name for name in map(_root, touched) if name is not None}
        reads |= roots
        changes |= roots
    return Uses(frozenset(reads), frozenset(changes))


def _cell_codes(step: Step) -> list[tuple[str, list[str]]]:
    """Each visible cell's id with its code; an exercise's with its check's and solution's,
    which run beside the learner's answer."""
    exercises = {e.id: e for e in step.exercises}
    found = []
    for cell in step.cells:
        codes = [cell.code]
        exercise = exercises.get(cell.id) if cell.kind is CellKind.EXERCISE else None
        if exercise is not None:
            codes += [exercise.check.code]
            codes += [exercise.solution.code] if exercise.solution is not None else []
        found.append((cell.id, codes))
    return found


def _merged(codes: list[str]) -> Uses:
    found = [uses(code) for code in codes]
    if any(u.opaque for u in found):
        return _EVERYTHING
    return Uses(
        frozenset().union(*(u.reads for u in found)),
        frozenset().union(*(u.changes for u in found)),
    )


def needed_cells(step: Step) -> dict[str, list[str]]:
    """For each visible cell of ``step``, the ids of the cells above it that its run needs
    first, in order: those that may bind or change a name it reads, then what they read."""
    cells = [(cell_id, _merged(codes)) for cell_id, codes in _cell_codes(step)]
    needs: dict[str, list[str]] = {}
    for index, (cell_id, own) in enumerate(cells):
        wanted, opaque, picked = set(own.reads), own.opaque, []
        for above_id, above in reversed(cells[:index]):
            if opaque or (above.opaque and wanted) or not above.changes.isdisjoint(wanted):
                picked.append(above_id)
                wanted |= above.reads
                opaque = opaque or above.opaque
        needs[cell_id] = picked[::-1]
    return needs
