"""The controls a cell declares (``promptdojo.ui``), read from its source without running it.

Calls whose arguments are all literals are checked as the learner's browser would run them, so
``promptdojo validate`` reports a default outside its range (or off its step, or not among the
choices) at its line, and the page can draw a cell's controls before the cell first runs. A call
with a computed argument is known only when the cell runs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from promptdojo.course.source import parse_python
from promptdojo.ui import ControlError, ControlRun, choice, collecting, slider, toggle

__all__ = ["declared_controls"]

_FUNCTIONS: dict[str, Callable[..., Any]] = {"slider": slider, "choice": choice, "toggle": toggle}


def _nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree``, as :func:`ast.walk` finds them but in another order and at half
    the cost: the fields are read directly, not through a generator a node."""
    found = []
    level = [tree]
    while level:
        found += level
        deeper: list[ast.AST] = []
        for node in level:
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    deeper.append(value)
                elif isinstance(value, list):
                    deeper += [item for item in value if isinstance(item, ast.AST)]
        level = deeper
    return found


def _control_calls(tree: ast.AST) -> Iterator[tuple[ast.Call, str]]:
    """Calls of ``slider``/``choice``/``toggle``, bare or as ``ui.slider``, in source order."""
    calls = []
    for node in _nodes(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name | ast.Attribute):
            # ``ui.slider``, ``promptdojo.ui.slider``: the name the call is made on ends in ui.
            owner = func.value.id if isinstance(func.value, ast.Name) else func.value.attr
            name = func.attr if owner.endswith("ui") else None
        if name in _FUNCTIONS:
            calls.append((node, name))
    yield from sorted(calls, key=lambda pair: (pair[0].lineno, pair[0].col_offset))


def _literal_arguments(call: ast.Call) -> tuple[list[Any], dict[str, Any]] | None:
    try:
        args = [ast.literal_eval(arg) for arg in call.args]
        kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if any(kw.arg is None for kw in call.keywords):
        return None
    return args, kwargs


def declared_controls(
    code: str, tree: ast.Module | None = None
) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """The controls ``code`` declares with literal arguments, and ``(line, problem)`` pairs.

    Lines count from 1 in ``code``. Code that does not mention ``promptdojo.ui`` (or ``ui``
    imported from ``promptdojo``) declares nothing here, whatever its functions are called.
    ``tree``, when given, is ``code`` parsed already.
    """
    if "promptdojo.ui" not in code and "import ui" not in code:
        return [], []
    try:
        tree = tree if tree is not None else parse_python(code)
    except SyntaxError:
        return [], []
    try:
        return _declared(tree)
    except RecursionError:  # arguments too deep to read: no control reads as one
        return [], []


def _declared(tree: ast.Module) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """:func:`declared_controls` of a parsed cell."""
    run = ControlRun()
    problems: list[tuple[int, str]] = []
    with collecting(run):
        for call, name in _control_calls(tree):
            arguments = _literal_arguments(call)
            if arguments is None:
                continue
            args, kwargs = arguments
            try:
                _FUNCTIONS[name](*args, **kwargs)
            except ControlError as exc:
                problems.append((call.lineno, str(exc)))
            except TypeError as exc:
                problems.append((call.lineno, f"{name}(...): {exc}"))
    return run.declared, problems
