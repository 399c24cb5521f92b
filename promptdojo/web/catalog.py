"""The lessons a server offers: every lesson folder parsed once, broken ones kept apart."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from promptdojo.course import (
    Diagnostic,
    Lesson,
    Location,
    discover,
)
from promptdojo.course.bulk import parse_many, read_safely
from promptdojo.course.links import check_links
from promptdojo.course.outline import (
    COURSE_FILE,
    Chapter,
    Course,
    check_lessons,
    implicit_course,
    read_course,
)
from promptdojo.course.parse import ParseCache
from promptdojo.course.records import read_records, record_path
from promptdojo.kernel import OUTPUT_CAP
from promptdojo.pyodide.lock import Lock

if TYPE_CHECKING:
    from promptdojo.web.pages import CachedPage

log = logging.getLogger("promptdojo.web")


def within_cap(record: dict) -> dict:
    """``record`` as a page may carry it: at most :data:`OUTPUT_CAP` characters of stdout and
    stderr together (with the cap noted, as the browser marks it), and no value longer than
    that. A record written by ``check`` already is; one written by hand or by an older version
    may not be."""
    out, err = str(record.get("stdout") or ""), str(record.get("stderr") or "")
    value = record.get("value") if isinstance(record.get("value"), dict) else {}
    if len(out) + len(err) <= OUTPUT_CAP and all(len(str(v)) <= OUTPUT_CAP for v in value.values()):
        return record
    capped = dict(record)
    if len(out) + len(err) > OUTPUT_CAP:
        capped["stdout"] = out[:OUTPUT_CAP]
        capped["stderr"] = err[: OUTPUT_CAP - len(capped["stdout"])]
        capped["truncated"] = OUTPUT_CAP
    capped["value"] = {
        mime: text if len(str(text)) <= OUTPUT_CAP else f"{str(text)[:OUTPUT_CAP]}…"
        for mime, text in value.items()
        if mime == "text/plain" or len(str(text)) <= OUTPUT_CAP
    }
    return capped


@dataclass
class Catalog:
    """Parsed lessons by id, and the folders that failed to parse with their diagnostics."""

    lessons: dict[str, Lesson] = field(default_factory=dict)
    broken: dict[Path, list[Diagnostic]] = field(default_factory=dict)
    #: Lessons with mistakes, read as far as they go, by id: served only in development, where
    #: each step shows its own mistakes and the other steps stay readable and runnable.
    drafts: dict[str, Lesson] = field(default_factory=dict)
    #: Recorded outputs per ``(lesson id, step number)``: shown until the learner's Python runs.
    records: dict[tuple[str, int], dict[str, dict]] = field(default_factory=dict)
    #: Rendered pages of this catalog by key; a new catalog starts empty.
    pages: dict[tuple, CachedPage] = field(default_factory=dict)
    #: What the files were read into, kept across reloads (``serve --reload``).
    cache: ParseCache | None = None
    #: The course's outline: ``course.yaml``'s, or one chapter of every folder in order.
    course: Course = field(default_factory=lambda: implicit_course([]))
    #: Every lesson id (a folder's name when it has none yet) in course order, listed first.
    order: list[str] = field(default_factory=list)
    #: Lesson folders by the id :attr:`order` gives them.
    folders: dict[str, Path] = field(default_factory=dict)
    #: Mistakes of the course as a whole: its course file, and links whose target is missing.
    course_problems: list[Diagnostic] = field(default_factory=list)
    #: What each lesson's steps import (promptdojo.course.imports), by lesson id: made once per
    #: lesson, not once per step page.
    imports: dict[str, object] = field(default_factory=dict)
    #: What each folder was read into (a lesson, or the parser's failure), for the next reload.
    read: dict[Path, Lesson | Exception] = field(default_factory=dict)

    def declared_packages(self) -> list[str]:
        """Every Pyodide package a served lesson declares, sorted and once each."""
        return sorted({name for lesson in self.lessons.values() for name in lesson.packages})

    @classmethod
    def load(
        cls,
        lessons_dir: Path,
        lock: Lock | Literal["default"] | None = "default",
        cache: ParseCache | None = None,
        previous: Catalog | None = None,
        changed: set[Path] | None = None,
        parsed_dir: Path | None = None,
    ) -> Catalog:
        """Parse every lesson under ``lessons_dir``; a broken lesson never hides the others.

        ``lock`` is the served Pyodide's lock, against which lesson packages are checked. With a
        ``cache`` (a reload's), only the step and record files that changed are read again; with
        the ``previous`` catalog and the paths ``changed`` since, a lesson folder none of them is
        in is not even looked at again. A first load reads many lessons in parallel, through the
        ``parsed_dir`` cache that ``validate`` fills too (promptdojo.course.bulk).
        """
        catalog = cls()
        catalog.cache = cache
        if not lessons_dir.is_dir():
            raise FileNotFoundError(
                f"lessons folder {lessons_dir} does not exist: pass the folder that holds "
                "your lessons, e.g. `promptdojo serve lessons/`"
            )
        folders = discover(lessons_dir)
        if lock == "default":
            lock = Lock.pinned()
        first: dict[Path, Lesson | Exception] = {}
        if previous is None:  # a ParseCache cannot go to another process: read here then
            salt = lock.version if lock is not None else "no lock"
            work = partial(read_safely, lock=lock, cache=cache)
            jobs = 1 if cache is not None else None
            read = parse_many(work, folders, jobs=jobs, cache=parsed_dir, salt=salt)
            first = dict(zip(folders, read, strict=True))
        for folder in folders:
            if previous is None:
                lesson, reused = first[folder], False
            else:
                known = previous.read.get(folder)
                touched = changed is None or _touched(folder, changed)
                reused = known is not None and not touched
                lesson = (
                    known if known is not None and not touched else read_safely(folder, lock, cache)
                )
            catalog.read[folder] = lesson
            if isinstance(lesson, Exception):
                catalog.broken[folder] = [
                    Diagnostic(Location(folder), f"the lesson parser failed: {lesson!r}")
                ]
                continue
            if lesson.problems:
                catalog.broken[folder] = list(lesson.problems)
                for diagnostic in lesson.problems:
                    log.warning("lesson left out: %s", diagnostic)
                if lesson.id not in catalog.lessons and lesson.id not in catalog.drafts:
                    catalog.drafts[lesson.id] = lesson
                    catalog._load_records(lesson, previous if reused else None)
                continue
            if lesson.id in catalog.lessons:
                other = catalog.lessons[lesson.id].path
                log.warning(
                    "lesson left out: %s: id %r is also used by %s", folder, lesson.id, other
                )
                continue
            catalog.lessons[lesson.id] = lesson
            catalog.drafts.pop(lesson.id, None)
            catalog._load_records(lesson, previous if reused else None)
        catalog._outline(lessons_dir, folders)
        return catalog

    def _outline(self, lessons_dir: Path, folders: list[Path]) -> None:
        """The course order, and the problems of the course as a whole (logged)."""
        ids = {lesson.path: lesson.id for lesson in (*self.drafts.values(), *self.lessons.values())}
        for folder in folders:
            self.folders.setdefault(ids.get(folder, folder.name), folder)
        # A reload reads the course file again only when it changed.
        course = (
            self.cache.remember(lessons_dir / COURSE_FILE, None, lambda: read_course(lessons_dir))
            if self.cache is not None
            else read_course(lessons_dir)
        )
        if course is None:
            self.course = implicit_course(list(self.folders))
        else:
            self.course = course
            errors, _ = check_lessons(course, self.folders)
            self.course_problems += [*course.problems, *errors]
        listed = [lesson_id for lesson_id in self.course.order if lesson_id in self.folders]
        self.order = listed + [lesson_id for lesson_id in self.folders if lesson_id not in listed]
        self.course_problems += check_links(self.lessons.values())
        for diagnostic in self.course_problems:
            log.warning("course: %s", diagnostic)

    def chapter_of(self, lesson_id: str) -> Chapter | None:
        """The numbered chapter of course.yaml that lists ``lesson_id``."""
        found = (c for c in self.course.chapters if lesson_id in c.lessons)
        return next((c for c in found if c.number is not None), None)

    def next_lesson(self, lesson_id: str) -> Lesson | None:
        """The lesson after ``lesson_id`` in course order that learners can open."""
        if lesson_id not in self.order:
            return None
        later = self.order[self.order.index(lesson_id) + 1 :]
        return next((self.lessons[i] for i in later if i in self.lessons), None)

    def _load_records(self, lesson: Lesson, previous: Catalog | None = None) -> None:
        """Each step's recorded outputs: the ``previous`` catalog's, when it has them all."""
        if previous is not None and all(
            (lesson.id, s.number) in previous.records for s in lesson.steps
        ):
            for step in lesson.steps:
                self.records[(lesson.id, step.number)] = previous.records[(lesson.id, step.number)]
            return
        for step in lesson.steps:
            found = (
                self.cache.remember(record_path(step), None, lambda step=step: read_records(step))
                if self.cache is not None
                else read_records(step)
            )
            if found.problem is not None:  # the step shows no recorded outputs
                log.warning("recorded outputs left out: %s", found.problem)
            self.records[(lesson.id, step.number)] = {
                cell_id: within_cap(record) for cell_id, record in found.records.items()
            }

    def lesson(self, lesson_id: str, dev: bool) -> Lesson | None:
        """The lesson ``lesson_id``; in development, a lesson with mistakes too."""
        found = self.lessons.get(lesson_id)
        if found is None and dev:
            found = self.drafts.get(lesson_id)
        return found


def _touched(folder: Path, changed: set[Path]) -> bool:
    """Whether a path of ``changed`` is in ``folder``, is it, or holds it."""
    inside, holder = str(folder) + os.sep, str(folder)
    return any(str(p).startswith(inside) or holder.startswith(str(p)) for p in changed)
