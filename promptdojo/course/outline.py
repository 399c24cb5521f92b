"""``course.yaml``: the course's title, parts and numbered chapters, each with its lessons in order.

The file sits beside the lesson folders. Without it the course is one implicit chapter holding
every lesson folder in folder order, as before there was a course file. Every mistake is
reported at its line; a lesson folder no chapter lists is a warning (it is still served, after
the listed ones), the rest are errors.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from promptdojo.course.metadata import SLUG, compose
from promptdojo.course.model import Diagnostic, Location
from promptdojo.course.problems import Report, did_you_mean, read_text

COURSE_FILE = "course.yaml"
COURSE_KEYS = ("title", "parts")
PART_KEYS = ("title", "chapters")
CHAPTER_KEYS = ("number", "title", "lessons")

EXAMPLE = """\
title: Inside LLM inference
parts:
  - title: Running models
    chapters:
      - number: 44
        title: Decoding, the KV cache, and quantization
        lessons:
          - decoding-kv-cache-quantization
"""


@dataclass(frozen=True)
class Chapter:
    """A numbered chapter and its lesson ids in order; ``number`` is ``None`` when implicit."""

    number: int | None
    title: str
    lessons: tuple[str, ...]
    location: Location | None = None
    #: The line of each lesson id as listed, in order.
    lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class Part:
    """A titled group of chapters (the title may be empty)."""

    title: str
    chapters: tuple[Chapter, ...]


@dataclass(frozen=True)
class Course:
    """The course's outline; ``path`` is ``None`` for the implicit one (no course file)."""

    title: str
    parts: tuple[Part, ...]
    path: Path | None = None
    problems: tuple[Diagnostic, ...] = ()
    warnings: tuple[Diagnostic, ...] = field(default=())

    @property
    def chapters(self) -> tuple[Chapter, ...]:
        return tuple(c for part in self.parts for c in part.chapters)

    @property
    def order(self) -> tuple[str, ...]:
        """Every listed lesson id once, in course order."""
        seen: dict[str, None] = {}
        for chapter in self.chapters:
            seen.update(dict.fromkeys(chapter.lessons))
        return tuple(seen)


def implicit_course(lesson_ids: list[str]) -> Course:
    """The course when there is no course file: one chapter, the folders in order."""
    return Course(title="", parts=(Part("", (Chapter(None, "", tuple(lesson_ids)),)),))


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _mapping(
    node: yaml.Node, path: Path, report: Report, keys: tuple[str, ...], what: str
) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        report.add(path, _line(node), f"{what} must be a mapping with keys {', '.join(keys)}")
        return {}
    found: dict[str, yaml.Node] = {}
    for key, value in node.value:
        name = str(key.value)
        if name not in keys:
            hint = did_you_mean(name, keys)
            report.add(path, _line(key), f"unknown key {name!r} in {what}", hint)
        else:
            found[name] = value
    return found


def _text(node: yaml.Node | None, path: Path, report: Report, what: str, line: int) -> str:
    if node is None or not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        report.add(path, _line(node) if node is not None else line, f"{what} needs a title")
        return ""
    return str(node.value)


def _sequence(node: yaml.Node | None, path: Path, report: Report, what: str, line: int) -> list:
    if node is None or (isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null")):
        return []
    if not isinstance(node, yaml.SequenceNode):
        report.add(path, _line(node), f"{what} must be a list (one `- ` item a line)")
        return []
    return list(node.value)


def _chapter(node: yaml.Node, path: Path, report: Report) -> Chapter | None:
    keys = _mapping(node, path, report, CHAPTER_KEYS, "a chapter")
    if not keys and not isinstance(node, yaml.MappingNode):
        return None
    line = _line(node)
    number_node = keys.get("number")
    number = None
    try:
        number = int(number_node.value) if isinstance(number_node, yaml.ScalarNode) else None
    except ValueError:
        number = None
    if number is None or number < 0:
        where = _line(number_node) if number_node is not None else line
        report.add(path, where, "a chapter needs a whole `number:`", "e.g. number: 44")
    title = _text(keys.get("title"), path, report, "a chapter", line)
    lessons: list[str] = []
    lines: list[int] = []
    for item in _sequence(keys.get("lessons"), path, report, "a chapter's lessons", line):
        value = str(item.value) if isinstance(item, yaml.ScalarNode) else ""
        if not SLUG.match(value):
            report.add(path, _line(item), "a lesson is listed by its id", "e.g. - my-lesson")
            continue
        lessons.append(value)
        lines.append(_line(item))
    if not lessons:
        report.add(
            path,
            line,
            f"chapter {number if number is not None else title!r} has no lessons",
            "list its lesson ids under `lessons:`, or remove the chapter",
        )
    return Chapter(number, title, tuple(lessons), Location(path, line), tuple(lines))


def read_course(lessons_dir: Path) -> Course | None:
    """The course file of ``lessons_dir`` with its own mistakes, or ``None`` when there is none."""
    path = Path(lessons_dir) / COURSE_FILE
    if not path.is_file():
        return None
    report = Report()
    text = read_text(path, report)
    node = None
    if text is not None:
        try:
            node = compose(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            reason = getattr(exc, "problem", None) or str(exc)
            report.add(path, line, f"invalid YAML in {COURSE_FILE}: {reason}")
    parts: list[Part] = []
    title = ""
    if node is None and not report.items:
        report.add(path, 1, f"{COURSE_FILE} is empty", f"start from:\n{EXAMPLE}")
    elif node is not None:
        top = _mapping(node, path, report, COURSE_KEYS, COURSE_FILE)
        title = _text(top.get("title"), path, report, "the course", 1)
        items = _sequence(top.get("parts"), path, report, "parts", 1)
        if "parts" not in top:
            report.add(path, 1, f"{COURSE_FILE} has no `parts:`", f"start from:\n{EXAMPLE}")
        for item in items:
            keys = _mapping(item, path, report, PART_KEYS, "a part")
            chapters = [
                chapter
                for chapter_node in _sequence(keys.get("chapters"), path, report, "chapters", 1)
                if (chapter := _chapter(chapter_node, path, report)) is not None
            ]
            if not chapters:
                report.add(path, _line(item), "a part needs `chapters:`, each with its lessons")
            part_title = keys.get("title")
            parts.append(
                Part(str(part_title.value) if part_title is not None else "", tuple(chapters))
            )
    _check_numbers(parts, path, report)
    return Course(title=title, parts=tuple(parts), path=path, problems=tuple(report.items))


def _check_numbers(parts: list[Part], path: Path, report: Report) -> None:
    numbers: dict[int, int] = {}
    for chapter in (c for part in parts for c in part.chapters):
        line = chapter.location.line if chapter.location else None
        if chapter.number is None:
            continue
        if chapter.number in numbers:
            report.add(
                path,
                line,
                f"chapter number {chapter.number} is used twice "
                f"(also line {numbers[chapter.number]})",
                "give each chapter its own number",
            )
        numbers.setdefault(chapter.number, line or 0)


def check_lessons(course: Course, found: dict[str, Path]) -> tuple[list[Diagnostic], list]:
    """Problems and warnings of the course file against the lesson folders ``found``, by id.

    A lesson listed twice or listed but missing is an error at its line (with the closest ids);
    a lesson folder no chapter lists is a warning at its ``lesson.yaml``.
    """
    if course.path is None:
        return [], []
    report, warnings = Report(), Report()
    first: dict[str, int] = {}
    for chapter in course.chapters:
        for lesson_id, line in zip(chapter.lessons, chapter.lines, strict=True):
            if lesson_id in first:
                report.add(
                    course.path,
                    line,
                    f"lesson {lesson_id!r} is listed twice (first on line {first[lesson_id]})",
                    "list each lesson in one chapter only",
                )
                continue
            first[lesson_id] = line
            if lesson_id not in found:
                close = difflib.get_close_matches(lesson_id, sorted(found), n=3, cutoff=0.5)
                hint = (
                    f"the closest lesson ids: {', '.join(close)}"
                    if close
                    else f"no lesson folder under {course.path.parent} has this id"
                )
                report.add(course.path, line, f"listed lesson {lesson_id!r} does not exist", hint)
    for lesson_id, folder in sorted(found.items()):
        if lesson_id not in first:
            warnings.add(
                folder / "lesson.yaml",
                1,
                f"no chapter of {course.path} lists lesson {lesson_id!r}",
                "add it under a chapter's `lessons:` (it is shown after the listed lessons)",
            )
    return report.items, warnings.items
