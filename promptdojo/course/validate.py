"""``promptdojo validate``: find lesson folders under the given paths and report every mistake."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from promptdojo.course.giveaway import giveaways
from promptdojo.course.model import Diagnostic, Lesson, LessonError, Location
from promptdojo.course.parse import LESSON_FILE, discover, load_lesson
from promptdojo.course.records import read_records


@dataclass
class ValidationResult:
    """Lessons that loaded, every diagnostic of those that did not, and warnings: mistakes that
    leave a lesson whole (a record file that cannot be used counts as missing)."""

    lessons: list[Lesson] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    def report(self) -> list[str]:
        """What ``promptdojo validate`` prints: every problem, every warning, then a count."""
        lines = [str(d) for d in self.diagnostics] + [f"warning: {w}" for w in self.warnings]
        count, lessons, warned = len(self.diagnostics), len(self.lessons), len(self.warnings)
        warnings = f", {warned} warning{'s' if warned != 1 else ''}" if warned else ""
        lines.append(
            f"{lessons} lesson{'s' if lessons != 1 else ''} valid, "
            f"{count} problem{'s' if count != 1 else ''}{warnings}"
        )
        return lines


def lesson_folders(paths: Iterable[Path]) -> tuple[list[Path], list[Diagnostic]]:
    """Lesson folders named by ``paths``: a lesson folder, a folder of lessons, or a step file."""
    folders: list[Path] = []
    problems: list[Diagnostic] = []
    for path in paths:
        if path.is_file() and (path.parent / LESSON_FILE).is_file():
            path = path.parent  # a step file (or lesson.yaml): its lesson
        if (path / LESSON_FILE).is_file():
            if path in folders:
                continue
            folders.append(path)
        elif path.is_dir():
            found = discover(path)
            if not found:
                problems.append(
                    Diagnostic(Location(path), "no lessons here", f"no */{LESSON_FILE} under it")
                )
            folders += found
        else:
            problems.append(
                Diagnostic(
                    Location(path),
                    "no such lesson folder or step file",
                    "pass lessons/, a lesson folder, or a step file like lessons/x/01-y.md",
                )
            )
    return folders, problems


def validate(paths: Iterable[Path]) -> ValidationResult:
    """Load every lesson under ``paths``, collecting all diagnostics."""
    folders, problems = lesson_folders(paths)
    result = ValidationResult(diagnostics=problems)
    for folder in folders:
        try:
            lesson = load_lesson(folder)
        except LessonError as exc:
            result.diagnostics += exc.diagnostics
            continue
        result.lessons.append(lesson)
        for step in lesson.steps:
            result.warnings += giveaways(step)
            found = read_records(step)
            if found.problem is None:
                continue
            # Conflict markers mean a merge left work undone: an error. Another broken record
            # is a warning: the step shows no recorded outputs until it is recorded again.
            (result.diagnostics if found.conflict else result.warnings).append(found.problem)
    return result
