"""Authoring: the lesson model, its parser, and the checks an instructor sees."""

from promptdojo.course.model import Cell, Diagnostic, Lesson, LessonError, Location, Prose, Step
from promptdojo.course.parse import discover, load_lesson

__all__ = [
    "Cell",
    "Diagnostic",
    "Lesson",
    "LessonError",
    "Location",
    "Prose",
    "Step",
    "discover",
    "load_lesson",
]
