"""``promptdojo validate``: find lesson folders under the given paths and report every mistake.

Besides each lesson's own mistakes: the course file's (``course.yaml``, when a folder of lessons
holds one) and every link between lessons, steps, headings and cells whose target is missing.
Lessons are parsed in parallel, in processes of their own, when there are many, and what each
lesson was parsed into is kept in a cache folder (``.cache/parsed/`` by default): a lesson none of
whose files changed since (nor the parser, nor the pinned Pyodide) is not parsed again.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from promptdojo.course.links import check_links
from promptdojo.course.model import Diagnostic, Lesson, LessonError, Location
from promptdojo.course.outline import check_lessons, read_course
from promptdojo.course.parse import LESSON_FILE, discover, load_lesson
from promptdojo.course.records import read_records

#: Below this many lessons, starting worker processes costs more than it saves.
PARALLEL_FROM = 16
#: Where what each lesson was parsed into is kept, relative to the working folder.
DEFAULT_PARSED_CACHE = Path(".cache/parsed")


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


def _load(folder: Path) -> tuple[Lesson | None, list[Diagnostic], list[Diagnostic]]:
    """One lesson, its errors, and its records' problems (as errors or warnings)."""
    try:
        lesson = load_lesson(folder)
    except LessonError as exc:
        return None, exc.diagnostics, []
    errors, warnings = [], []
    for step in lesson.steps:
        found = read_records(step)
        if found.problem is not None:
            # Conflict markers mean a merge left work undone: an error. Another broken record
            # is a warning: the step shows no recorded outputs until it is recorded again.
            (errors if found.conflict else warnings).append(found.problem)
    return lesson, errors, warnings


def _parser_version() -> str:
    """What the parse depends on besides the lesson's files: the authoring code and the pinned
    lock (their sizes and modification times), and this Python."""
    import promptdojo.course
    from promptdojo.pyodide.lock import Lock

    digest = hashlib.sha256(repr(sys.version_info).encode())
    course = Path(promptdojo.course.__file__).parent
    # The course room, and the kernel's rules for controls that it validates with.
    for path in [
        *sorted(course.glob("*.py")),
        course.parent / "ui.py",
        course.parent / "kernel.py",
    ]:
        info = path.stat()
        digest.update(f"{path.name}:{info.st_size}:{info.st_mtime_ns}".encode())
    digest.update(Lock.pinned().version.encode())
    return digest.hexdigest()


def _identity(folder: Path, version: str) -> str:
    """A name for the state of ``folder``'s files (each one's inode, size and times)."""
    digest = hashlib.sha256(f"{folder.resolve()}\0{version}".encode())
    for path in sorted([*folder.iterdir(), *folder.glob("recorded/*")]):
        try:
            info = path.stat()
        except OSError:
            continue
        stamp = (path.name, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        digest.update(repr(stamp).encode())
    return digest.hexdigest()[:40]


def _load_cached(folder: Path, cache: Path | None, version: str):
    if cache is None:
        return _load(folder)
    kept = cache / f"{_identity(folder, version)}.pickle"
    try:
        return pickle.loads(kept.read_bytes())
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError):
        pass
    made = _load(folder)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache, delete=False, suffix=".tmp") as out:
            out.write(pickle.dumps(made))
        os.replace(out.name, kept)
    except OSError:
        pass  # a cache that cannot be written only costs time
    return made


def _load_all(folders: list[Path], jobs: int | None, cache: Path | None):
    version = _parser_version() if cache is not None else ""
    if cache is not None:  # the lessons parsed before, unchanged, are read from the cache
        ready = {f: found for f in folders if (found := _kept(f, cache, version)) is not None}
    else:
        ready = {}
    todo = [f for f in folders if f not in ready]
    if len(todo) < PARALLEL_FROM or (jobs or os.cpu_count() or 1) < 2:
        made = [_load_cached(folder, cache, version) for folder in todo]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            args = ([cache] * len(todo), [version] * len(todo))
            made = list(pool.map(_load_cached, todo, *args, chunksize=max(1, len(todo) // 32)))
    ready.update(zip(todo, made, strict=True))
    return [ready[folder] for folder in folders]


def _kept(folder: Path, cache: Path, version: str):
    try:
        return pickle.loads((cache / f"{_identity(folder, version)}.pickle").read_bytes())
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError):
        return None


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
    loaded = _load_all(folders, jobs, cache)
    for folder, (lesson, errors, warnings) in zip(folders, loaded, strict=True):
        result.diagnostics += errors
        result.warnings += warnings
        found[lesson.id if lesson is not None else folder.name] = folder
        if lesson is not None:  # whole, if perhaps with a record holding conflict markers
            result.lessons.append(lesson)
    # Links into a lesson that did not load are checked once it loads.
    unread = {folder.name for folder, made in zip(folders, loaded, strict=True) if made[0] is None}
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
    for diagnostic in result.diagnostics:
        echo(str(diagnostic))
    for warning in result.warnings:
        echo(f"warning: {warning}")
    count = len(result.diagnostics)
    lessons = len(result.lessons)
    warnings = f", {len(result.warnings)} warning{'s' if len(result.warnings) != 1 else ''}"
    echo(
        f"{lessons} lesson{'s' if lessons != 1 else ''} valid, "
        f"{count} problem{'s' if count != 1 else ''}{warnings if result.warnings else ''}",
        err=bool(count),
    )
    return 1 if count else 0
