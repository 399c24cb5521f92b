"""What a step's cells import, so that the page imports it while Python starts.

A module's first import is a page's slowest moment: CPython compiles every file of it to
bytecode, in WebAssembly (numpy is some 180 files), and the learner waits on the first Run.
The server reads each cell's ``import`` statements here and the kernel worker imports those
modules before it says "ready" (``static/js/kernel/boot.js``). Only modules that import without side
effects a learner would see are listed: the learner library, the lesson's packages, and the
standard library.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable

from promptdojo.course.model import Lesson, Step

#: The learner library's package: its modules are always safe to import early.
LIBRARY = "promptdojo"


def imported_modules(code: str) -> list[str]:
    """The absolute module names ``code`` imports, in order (a cell that does not parse: none)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return names


def step_imports(step: Step, packages: Iterable[str]) -> list[str]:
    """The modules ``step``'s cells (visible, setup, checks, solutions) import that are safe to
    import early: the learner library's, ``packages``' (a lesson's declared packages) and the
    standard library's. In first-use order, each once."""
    allowed = {LIBRARY, *packages, *sys.stdlib_module_names}
    cells = [*step.setup, *step.cells]
    for exercise in step.exercises:
        cells += [exercise.check] + ([exercise.solution] if exercise.solution else [])
    found: dict[str, None] = {}
    for cell in cells:
        for name in imported_modules(cell.code):
            if name.split(".")[0] in allowed:
                found.setdefault(name, None)
    return list(found)


def lesson_imports(lesson: Lesson) -> dict[str, list[str]]:
    """:func:`step_imports` of every step, by step number (as text, a JSON object's keys)."""
    return {str(step.number): step_imports(step, lesson.packages) for step in lesson.steps}
