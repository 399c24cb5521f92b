"""The index as a course map: parts and numbered chapters, each lesson with its step count, and
the lessons that cannot be opened now shown as such, never left out.

A lesson with mistakes is listed where it belongs, as unavailable: in development with each
mistake's FILE:LINE, otherwise as being fixed. Lessons no chapter lists follow the listed ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promptdojo.course import Diagnostic, Lesson, Location
from promptdojo.web.catalog import Catalog


@dataclass(frozen=True)
class Entry:
    """One lesson of the map; ``lesson`` is ``None`` when it cannot be opened, even in
    development (its folder could not be read at all)."""

    id: str
    title: str
    lesson: Lesson | None
    available: bool
    problems: tuple[Diagnostic, ...] = ()


@dataclass
class ChapterView:
    number: int | None
    title: str
    entries: list[Entry] = field(default_factory=list)


@dataclass
class PartView:
    title: str
    chapters: list[ChapterView] = field(default_factory=list)


def _entry(catalog: Catalog, lesson_id: str) -> Entry | None:
    lesson = catalog.lessons.get(lesson_id)
    if lesson is not None:
        return Entry(lesson.id, lesson.title, lesson, True)
    folder = catalog.folders.get(lesson_id)
    if folder is None:
        return None  # listed, but there is no such folder: a course problem
    draft = catalog.drafts.get(lesson_id)
    problems = tuple(catalog.broken.get(folder, ()))
    if draft is not None:
        return Entry(draft.id, draft.title, draft, False, problems or draft.problems)
    # A folder whose id another lesson already has, or that the parser could not read.
    reason = problems or (
        Diagnostic(Location(folder / "lesson.yaml", 1), "its id is used by another lesson"),
    )
    return Entry(lesson_id, lesson_id, None, False, tuple(reason))


def course_map(catalog: Catalog) -> list[PartView]:
    """The course's parts, chapters and lessons in order, with a last chapter of the lessons no
    chapter lists."""
    parts: list[PartView] = []
    listed: set[str] = set()
    for part in catalog.course.parts:
        view = PartView(part.title)
        for chapter in part.chapters:
            entries = [e for i in chapter.lessons if i not in listed and (e := _entry(catalog, i))]
            listed.update(chapter.lessons)
            view.chapters.append(ChapterView(chapter.number, chapter.title, entries))
        parts.append(view)
    rest = [e for i in catalog.order if i not in listed and (e := _entry(catalog, i))]
    if rest:
        if not parts:
            parts.append(PartView(""))
        title = "Other lessons" if catalog.course.path is not None else ""
        parts[-1].chapters.append(ChapterView(None, title, rest))
    return parts
