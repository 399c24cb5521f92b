"""Declared packages the checking CPython lacks: said once, up front, with the way to add them.

``packages:`` names Pyodide packages; the CPython check imports them from its own environment.
A package Pyodide has but this Python lacks (``scipy``) would otherwise surface cell by cell as
``ModuleNotFoundError``.
"""

from __future__ import annotations

import importlib.util
import sys

from promptdojo.course.model import Lesson
from promptdojo.pyodide.lock import Lock


def absent_here(lesson: Lesson, lock: Lock) -> list[str]:
    """The lesson's declared packages that this Python cannot import."""
    absent = []
    for name in lesson.packages:
        entry = lock.packages.get(name.lower(), {})
        imports = entry.get("imports") or [name]
        if all(importlib.util.find_spec(module) is None for module in imports):
            absent.append(name)
    return absent


def absent_message(lesson: Lesson, absent: list[str]) -> str:
    """``FILE: what this Python lacks: how to add it, or where else to check``."""
    names = ", ".join(absent)
    verb = "is" if len(absent) == 1 else "are"
    return (
        f"{lesson.path / 'lesson.yaml'}: warning: {names} {verb} declared but this Python "
        f"({sys.executable}) lacks {'it' if len(absent) == 1 else 'them'}, so the cells that "
        f"import {'it' if len(absent) == 1 else 'them'} will fail here: install with "
        f"`{sys.executable} -m pip install {' '.join(absent)}`, or check in Pyodide with "
        "`promptdojo check --pyodide`"
    )


def warnings_for(lessons: list[Lesson]) -> list[str]:
    """One warning per lesson that declares packages this Python lacks."""
    lock = Lock.pinned()
    found = []
    for lesson in lessons:
        absent = absent_here(lesson, lock)
        if absent:
            found.append(absent_message(lesson, absent))
    return found
