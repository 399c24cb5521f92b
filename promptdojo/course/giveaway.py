"""Feedback that gives the answer away: a hint, or a check's message, holding the solution.

Hints should lead and a check's message should name a symptom; when either holds a line of the
solution's own code, or the exact value the solution sets (``prediction = 0.36``), the learner
is told rather than taught. :func:`giveaways` finds both, as warnings of ``validate``.
"""

from __future__ import annotations

import ast
import html
import re

from promptdojo.course.model import Cell, Diagnostic, Exercise, Location, Step
from promptdojo.course.source import parse_python

_TAG = re.compile(r"<[^>]+>")
#: Solution lines too common to give anything away.
_PLAIN = ("#", "print", "def ", "from ", "import ", "return None", "pass", "else:", "try:")


def _solution_lines(code: str) -> list[str]:
    """The solution's lines that hold its idea: not comments, headers, imports or prints."""
    lines = (line.strip() for line in code.splitlines())
    return [line for line in lines if len(line) >= 8 and not line.startswith(_PLAIN)]


def _answer_values(code: str) -> list[str]:
    """Numbers the solution binds as literals at its top level (``n_kept = 3``), as written."""
    try:
        tree = parse_python(code)
    except SyntaxError:
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


def _messages(check: Cell) -> list[tuple[str, int]]:
    """The literal text of the check's messages (assert messages, raised errors' arguments),
    each with its line in the step file."""
    try:
        tree = parse_python(check.code)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
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


def _holds(text: str, exercise: Exercise) -> str:
    """What of the solution ``text`` gives away, described; ``""`` when nothing."""
    assert exercise.solution is not None
    for line in _solution_lines(exercise.solution.code):
        if line in text:
            return f"the solution's line `{line}`"
    for value in _answer_values(exercise.solution.code):
        if re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", text):
            return f"the solution's answer {value}"
    return ""


def giveaways(step: Step) -> list[Diagnostic]:
    """A warning for each hint or check message of ``step`` that holds its solution."""
    warnings = []
    for exercise in step.exercises:
        if exercise.solution is None:
            continue
        for number, hint in enumerate(exercise.hints, 1):
            what = _holds(html.unescape(_TAG.sub("", hint.html)), exercise)
            if what:
                warnings.append(
                    Diagnostic(
                        hint.location,
                        f"hint {number} of exercise {exercise.id!r} gives away {what}",
                        "lead to it instead: name the idea, or a value to try it on",
                    )
                )
        for text, line in _messages(exercise.check):
            what = _holds(text, exercise)
            if what:
                warnings.append(
                    Diagnostic(
                        Location(step.path, line),
                        f"the check of exercise {exercise.id!r} says {what}",
                        "name the symptom instead (what the learner's code gives, and where)",
                    )
                )
    return warnings
