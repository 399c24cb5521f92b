"""Authoring: the lesson model, its parser, and the checks an instructor sees.

The model (:mod:`promptdojo.course.model`) needs only the standard library, so the cell check can
use it inside Pyodide; the parser (markdown-it, PyYAML) loads only when asked for.
"""

from typing import Any

from promptdojo.course.model import (
    Cell,
    CellKind,
    Diagnostic,
    Exercise,
    Hint,
    Lesson,
    LessonError,
    Location,
    Prose,
    Step,
)

__all__ = [
    "Cell",
    "CellKind",
    "Diagnostic",
    "Exercise",
    "Hint",
    "Lesson",
    "LessonError",
    "Location",
    "Prose",
    "Step",
    "discover",
    "load_lesson",
]


def __getattr__(name: str) -> Any:
    if name in ("discover", "load_lesson"):
        from promptdojo.course import parse

        return getattr(parse, name)
    raise AttributeError(f"module 'promptdojo.course' has no attribute {name!r}")
