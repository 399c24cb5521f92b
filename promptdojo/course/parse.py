"""Read a lesson folder into the typed model, reporting every mistake with its file and line.

The format is documented in ``docs/authoring.md``. In short: ``lesson.yaml`` holds the metadata,
each ``NN-slug.md`` file is a step with YAML front matter, fenced ``python`` blocks are cells whose
attributes (``{#id .exercise time_limit=5}``) say what they are, and fenced ``markdown {.hint}``
blocks are hints. All mistakes are collected, so one run reports them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from promptdojo.course.cells import ImportRules
from promptdojo.course.metadata import LESSON_FILE, SLUG, parse_metadata
from promptdojo.course.model import DEFAULT_TIME_LIMIT, Lesson, LessonError, Step
from promptdojo.course.problems import Report
from promptdojo.course.steps import STEP_FILE, parse_step
from promptdojo.pyodide.lock import Lock

__all__ = ["LESSON_FILE", "SLUG", "STEP_FILE", "discover", "load_lesson", "markdown"]


def markdown() -> MarkdownIt:
    """The one markdown dialect of lessons: CommonMark, tables, front matter, no raw HTML."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").use(front_matter_plugin)


def load_lesson(folder: Path, lock: Lock | Literal["default"] | None = "default") -> Lesson:
    """Parse the lesson in ``folder``; raise :class:`LessonError` listing every mistake.

    ``lock`` is the pinned Pyodide's lock (:class:`promptdojo.pyodide.lock.Lock`) used to
    check imports; by default the one shipped with the package, and ``None`` skips the check.
    """
    folder = Path(folder)
    if lock == "default":
        lock = Lock.pinned()
    report = Report()
    known = set(lock.packages) if lock is not None else None
    meta = parse_metadata(folder, report, known)
    declared: set[str] = set()
    if lock is not None:
        try:
            declared = set(
                lock.with_dependencies(
                    [str(p) for p in meta.get("packages") or [] if str(p).lower() in lock.packages]
                )
            )
        except Exception:  # an unknown package was already reported
            declared = set()
    rules = ImportRules(
        declared=declared,
        package_for_import=lock.package_for_import if lock is not None else None,
        version=f"Pyodide {lock.version}" if lock is not None else "the pinned Pyodide",
    )
    md = markdown()
    steps: list[Step] = []
    seen: dict[int, Path] = {}
    for path in sorted(folder.glob("*.md")):
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
        step = parse_step(md, path, number, match["slug"], report, rules)
        if step is not None:
            steps.append(step)
    if not seen:
        report.add(folder, None, "lesson has no steps", "add a step file like 01-intro.md")
    expected = 1
    for number in sorted(seen):
        if number != expected:
            report.add(
                seen[number],
                None,
                f"step number {number} should be {expected}",
                "number steps 01, 02, 03, … without gaps",
            )
            break
        expected += 1
    if report.items:
        raise LessonError(report.items)
    return Lesson(
        id=str(meta["id"]),
        title=str(meta["title"]),
        chapter=str(meta["chapter"]),
        version=int(meta.get("version", 1)),
        path=folder,
        packages=tuple(str(p) for p in meta.get("packages") or ()),
        time_limit=float(meta.get("time_limit", DEFAULT_TIME_LIMIT)),
        seed=int(meta.get("seed", 0)),
        steps=tuple(sorted(steps, key=lambda s: s.number)),
    )


def discover(lessons_dir: Path) -> list[Path]:
    """Every lesson folder directly under ``lessons_dir`` (those holding a lesson.yaml)."""
    return sorted(p.parent for p in Path(lessons_dir).glob(f"*/{LESSON_FILE}"))
