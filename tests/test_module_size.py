"""No Python module over 400 lines and no function over 80: a longer one does more than one job;
split it by job.

(JavaScript holds the same two rules: ``tests/js/functions.test.mjs`` and
``tests/js/modules.test.mjs``.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import promptdojo

PACKAGE = Path(promptdojo.__file__).parent
MAX_LINES = 400
MAX_FUNCTION_LINES = 80


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """``(name, line, lines)`` of every function and method in ``source``, nested ones too:
    from its ``def`` line to its last line (decorators aside), docstring included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node.name, node.lineno, node.end_lineno - node.lineno + 1))
    return found


def test_no_module_is_over_400_lines() -> None:
    long = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_no_function_is_over_80_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE).as_posix()}:{line} {name}: {lines} lines"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, line, lines in function_lengths(path.read_text(encoding="utf-8"))
        if lines > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_the_measure_counts_methods_nested_functions_and_docstrings() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(85))
    source = (
        f'def big():\n    """Doc."""\n{body}\n\n'
        "class K:\n    async def method(self):\n        def inner():\n            pass\n"
    )
    lengths = {name: lines for name, _, lines in function_lengths(source)}
    assert lengths == {"big": 87, "method": 3, "inner": 2}
