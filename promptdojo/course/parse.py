"""Read a lesson folder into the typed model, reporting every mistake with its file and line.

The format is documented in ``docs/authoring.md``. In short: ``lesson.yaml`` holds the metadata,
each ``NN-slug.md`` file is a step with YAML front matter, fenced ``python`` blocks are cells whose
attributes (``{#id .exercise time_limit=5}``) say what they are, and fenced ``markdown {.hint}``
blocks are hints. All mistakes are collected, so one run reports them all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from promptdojo.course.cells import ImportRules
from promptdojo.course.exercises import orphan_problems
from promptdojo.course.metadata import LESSON_FILE, SLUG, LessonMeta, parse_metadata
from promptdojo.course.model import Lesson, LessonError, Step
from promptdojo.course.problems import Report, is_lesson_file
from promptdojo.course.steps import STEP_FILE, markdown, parse_step
from promptdojo.pyodide.lock import Lock

T = TypeVar("T")

__all__ = [
    "LESSON_FILE",
    "SLUG",
    "STEP_FILE",
    "ParseCache",
    "discover",
    "load_lesson",
    "markdown",
    "read_lesson",
]


#: Renders the steps' prose and hints (it holds no state between renders): one for every lesson,
#: not one made for each.
_RENDERER = markdown()


def load_lesson(folder: Path, lock: Lock | Literal["default"] | None = "default") -> Lesson:
    """Parse the lesson in ``folder``; raise :class:`LessonError` listing every mistake.

    ``lock`` is the pinned Pyodide's lock (:class:`promptdojo.pyodide.lock.Lock`) used to
    check imports; by default the one shipped with the package, and ``None`` skips the check.
    """
    lesson = read_lesson(folder, lock)
    if lesson.problems:
        raise LessonError(list(lesson.problems))
    return lesson


class ParseCache:
    """What was made of each file, kept while the file stays the same (the same inode, size,
    modification and change times): a reload re-reads and re-parses only the files that changed.

    Safe to share between threads; :meth:`forget` drops files a watcher saw change, so that even
    a change within one tick of the file system's clock is read again.
    """

    def __init__(self) -> None:
        self._made: dict[Path, tuple[tuple, Any]] = {}
        self._lock = threading.Lock()

    def remember(self, path: Path, key: Hashable, make: Callable[[], T]) -> T:
        """``make()``, or what it made last time for ``path`` unchanged and the same ``key``."""
        try:
            info = path.stat()
            identity = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, key)
        except OSError:
            return make()
        with self._lock:
            known = self._made.get(path)
        if known is not None and known[0] == identity:
            return known[1]
        made = make()
        with self._lock:
            self._made[path] = (identity, made)
        return made

    def forget(self, paths: Iterable[Path]) -> None:
        """Make the next :meth:`remember` of each of ``paths`` read it again."""
        with self._lock:
            for path in paths:
                self._made.pop(Path(path), None)


def read_lesson(
    folder: Path,
    lock: Lock | Literal["default"] | None = "default",
    cache: ParseCache | None = None,
) -> Lesson:
    """Parse the lesson in ``folder`` as far as it goes, never raising for a mistake.

    Every mistake lands in ``problems`` (the lesson's, in order) and in the ``problems`` of the
    step whose file holds it, so a development server can show each step's mistakes in place
    while the lesson's other steps stay readable and runnable. With a ``cache``, a step file
    that has not changed since it was last parsed is not read again.
    """
    folder = Path(folder)
    if lock == "default":
        lock = Lock.pinned()
    report = Report()
    known = set(lock.packages) if lock is not None else None
    meta = parse_metadata(folder, report, known)
    steps, numbers = _read_steps(folder, _import_rules(meta, lock), report, cache)
    if not numbers:
        report.add(folder, None, "lesson has no steps", "add a step file like 01-intro.md")
    for expected, number in enumerate(sorted(numbers), start=1):
        if number != expected:
            report.add(
                numbers[number],
                None,
                f"step number {number} should be {expected}",
                "number steps 01, 02, 03, … without gaps",
            )
            break
    orphan_problems(steps, report)
    problems = tuple(report.items)
    steps = [
        replace(step, problems=tuple(d for d in problems if d.location.path == step.path))
        for step in sorted(steps, key=lambda s: s.number)
    ]
    return Lesson(**asdict(meta), path=folder, steps=tuple(steps), problems=problems)


def _read_steps(
    folder: Path, rules: ImportRules, report: Report, cache: ParseCache | None
) -> tuple[list[Step], dict[int, Path]]:
    """The steps of ``folder``, in file order, and the file of each step number; a file with no
    number, or a number taken, is reported and left out."""
    md = _RENDERER
    steps: list[Step] = []
    seen: dict[int, Path] = {}
    rules_key = (frozenset(rules.declared), rules.version, rules.package_for_import is None)
    for path in step_files(folder):
        match = STEP_FILE.match(path.name)
        if match is None:
            report.add(
                path,
                None,
                "step file name does not start with a step number",
                "name it like 01-overview.md",
            )
            continue
        number = int(match["number"])
        if number in seen:
            report.add(
                path,
                None,
                f"duplicate step number {number} (also {seen[number].name})",
                "renumber one of them",
            )
            continue
        seen[number] = path

        def parse(path: Path = path, number: int = number, slug: str = match["slug"]) -> tuple:
            found = Report()
            return parse_step(md, path, number, slug, found, rules), tuple(found.items)

        step, found = cache.remember(path, rules_key, parse) if cache is not None else parse()
        report.items += found
        if step is None:  # unreadable: keep its place, so later steps keep their numbers
            title = match["slug"].replace("-", " ").capitalize()
            step = Step(number=number, slug=match["slug"], title=title, path=path, parts=())
        steps.append(step)
    return steps, seen


def _import_rules(meta: LessonMeta, lock: Lock | None) -> ImportRules:
    """What cells may import: the declared packages the lock has, and their dependencies."""
    declared: set[str] = set()
    if lock is not None:
        names = [p for p in meta.packages if p.lower() in lock.packages]
        try:
            declared = set(lock.with_dependencies(names))
        except Exception:  # an unknown package was already reported
            declared = set()
    return ImportRules(
        declared=declared,
        package_for_import=lock.package_for_import if lock is not None else None,
        version=f"Pyodide {lock.version}" if lock is not None else "the pinned Pyodide",
    )


def step_files(folder: Path) -> list[Path]:
    """The markdown files of ``folder`` that may be steps, in order: regular files only, and no
    hidden or editor files (an Emacs lock ``.#01-a.md``, a macOS ``._01-a.md``)."""
    return [path for path in sorted(folder.glob("*.md")) if is_lesson_file(path)]


def discover(lessons_dir: Path) -> list[Path]:
    """Every lesson folder directly under ``lessons_dir`` (those holding a lesson.yaml)."""
    return sorted(p.parent for p in Path(lessons_dir).glob(f"*/{LESSON_FILE}"))
