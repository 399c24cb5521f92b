"""``promptdojo validate``: find lesson folders under the given paths and report every mistake.

Besides each lesson's own mistakes: the course file's (``course.yaml``, when a folder of lessons
holds one) and every link between lessons, steps, headings and cells whose target is missing.
Lessons are parsed in parallel, in processes of their own, when there are many, and what each
lesson was parsed into is kept in a cache folder (``.cache/parsed/`` by default): a lesson none of
whose files changed since (nor the parser, nor the pinned Pyodide) is not parsed again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from promptdojo.course.bulk import DEFAULT_PARSED_CACHE, parse_many, read_safely
from promptdojo.course.links import check_links
from promptdojo.course.model import Diagnostic, Lesson, Location
from promptdojo.course.outline import check_lessons, read_course
from promptdojo.course.parse import LESSON_FILE, discover
from promptdojo.course.records import read_records
from promptdojo.pyodide.lock import Lock


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


def _checked(folder: Path, read: Lesson | Exception) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """One lesson's errors as read, and its records' problems (as errors or warnings)."""
    if isinstance(read, Exception):
        return [Diagnostic(Location(folder), f"the lesson parser failed: {read!r}")], []
    if read.problems:
        return list(read.problems), []
    errors, warnings = [], []
    for step in read.steps:
        # A hint or a check's message that gives the solution away: a warning.
        warnings += step.warnings
        found = read_records(step)
        if found.problem is not None:
            # Conflict markers mean a merge left work undone: an error. Another broken record
            # is a warning: the step shows no recorded outputs until it is recorded again.
            (errors if found.conflict else warnings).append(found.problem)
    return errors, warnings


def validate(
    paths: Iterable[Path], jobs: int | None = None, cache: Path | None = None
) -> ValidationResult:
    """Load every lesson under ``paths``, collecting all diagnostics; then check the course
    files of the folders of lessons among them, and the links between lessons. With a
    ``cache`` folder, lessons whose files did not change are read from it."""
    paths = list(paths)
    folders, problems = lesson_folders(paths)
    result = ValidationResult(diagnostics=problems)
    found: dict[str, Path] = {}
    lock = Lock.pinned()
    # Each lesson's records are checked where it is read: in the worker processes, for many.
    work = partial(read_safely, lock=lock)
    loaded = parse_many(work, folders, jobs, cache, salt=lock.version, then=_checked)
    unread = set()  # links into a lesson that did not load are checked once it loads
    for folder, (read, (errors, warnings)) in zip(folders, loaded, strict=True):
        result.diagnostics += errors
        result.warnings += warnings
        if isinstance(read, Exception) or read.problems:
            found[folder.name] = folder
            unread.add(folder.name)
        else:  # whole, if perhaps with a record holding conflict markers
            found[read.id] = folder
            result.lessons.append(read)
    for path in paths:
        if path.is_dir() and not (path / LESSON_FILE).is_file():
            course = read_course(path)
            if course is not None:
                result.diagnostics += course.problems
                errors, warnings = check_lessons(course, found)
                result.diagnostics += errors
                result.warnings += warnings
        else:  # one lesson: links into the others are for a run over the whole course
            lesson_dir = path if path.is_dir() else path.parent
            unread |= {folder.name for folder in discover(lesson_dir.parent)}
    result.diagnostics += check_links(result.lessons, unread)
    return result


def report(paths: Iterable[Path], echo: Callable[..., None]) -> int:
    """Validate ``paths`` and print every problem, every warning and a summary line through
    ``echo``; return the exit status (1 when there is a problem)."""
    result = validate(paths, cache=DEFAULT_PARSED_CACHE)
    *lines, last = result.report()
    for line in lines:
        echo(line)
    echo(last, err=not result.ok)
    return 0 if result.ok else 1
