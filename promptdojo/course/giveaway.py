"""Feedback that gives the answer away: a hint, or a check's message, holding the solution.

Hints should lead and a check's message should name a symptom; when either holds a line of the
solution's own code, or the exact value the solution sets (``prediction = 0.36``), the learner
is told rather than taught. :func:`giveaways` finds both, as warnings of ``validate``.
"""

from __future__ import annotations

import ast
import html
import re

from promptdojo.course.model import Cell, Diagnostic, Location, Step
from promptdojo.course.source import parse_python, statements

_TAG = re.compile(r"<[^>]+>")
#: Solution lines too common to give anything away.
_PLAIN = ("#", "print", "def ", "from ", "import ", "return None", "pass", "else:", "try:")


def _solution_lines(code: str) -> list[str]:
    """The solution's lines that hold its idea: not comments, headers, imports or prints."""
    lines = (line.strip() for line in code.splitlines())
    return [line for line in lines if len(line) >= 8 and not line.startswith(_PLAIN)]


def _parsed(code: str, trees: dict[str, ast.Module]) -> ast.Module | None:
    """``code``'s syntax tree: from ``trees`` (the step's cells, parsed once) or parsed here."""
    if code in trees:
        return trees[code]
    try:
        return parse_python(code)
    except SyntaxError:
        return None


def _answer_values(code: str, trees: dict[str, ast.Module]) -> list[str]:
    """Numbers the solution binds as literals at its top level (``n_kept = 3``), as written."""
    tree = _parsed(code, trees)
    if tree is None:
        return []
    values = []
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            value = value.operand
        if isinstance(value, ast.Constant) and type(value.value) in (int, float):
            text = ast.get_source_segment(code, value) or ""
            if len(text.strip("0.-")) >= 2:  # 0, 1, 0.5 are everywhere; 0.36 is an answer
                values.append(text)
    return values


def _messages(check: Cell, trees: dict[str, ast.Module]) -> list[tuple[str, int]]:
    """The literal text of the check's messages (assert messages, raised errors' arguments),
    each with its line in the step file."""
    tree = _parsed(check.code, trees)
    if tree is None:
        return []
    found = []
    for node in statements(tree):
        parts: list[ast.expr] = []
        if isinstance(node, ast.Assert) and node.msg is not None:
            parts = [node.msg]
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            parts = list(node.exc.args)
        for part in parts:
            text = "".join(
                str(n.value)
                for n in ast.walk(part)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
            if text:
                found.append((text, check.first_line + node.lineno - 1))
    return found


def _holds(text: str, lines: list[str], values: list[tuple[str, re.Pattern]]) -> str:
    """What of the solution (its idea's ``lines``, its answer ``values``) ``text`` gives away,
    described; ``""`` when nothing."""
    for line in lines:
        if line in text:
            return f"the solution's line `{line}`"
    for value, pattern in values:
        if pattern.search(text):
            return f"the solution's answer {value}"
    return ""


def giveaways(step: Step, trees: dict[str, ast.Module] | None = None) -> list[Diagnostic]:
    """A warning for each hint or check message of ``step`` that holds its solution; ``trees``
    holds the syntax trees of its cells' code, where they were parsed already."""
    trees = trees if trees is not None else {}
    warnings = []
    for exercise in step.exercises:
        if exercise.solution is None:
            continue
        solution = exercise.solution.code
        lines = _solution_lines(solution)
        values = [
            (v, re.compile(rf"(?<![\w.]){re.escape(v)}(?![\w]|\.\d)"))
            for v in _answer_values(solution, trees)
        ]
        for number, hint in enumerate(exercise.hints, 1):
            what = _holds(html.unescape(_TAG.sub("", hint.html)), lines, values)
            if what:
                warnings.append(
                    Diagnostic(
                        hint.location,
                        f"hint {number} of exercise {exercise.id!r} gives away {what}",
                        "lead to it instead: name the idea, or a value to try it on",
                    )
                )
        for text, line in _messages(exercise.check, trees):
            what = _holds(text, lines, values)
            if what:
                warnings.append(
                    Diagnostic(
                        Location(step.path, line),
                        f"the check of exercise {exercise.id!r} says {what}",
                        "name the symptom instead (what the learner's code gives, and where)",
                    )
                )
    return warnings
