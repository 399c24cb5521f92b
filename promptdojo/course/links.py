"""Links between lessons, steps, headings and cells, written in prose and checked across the course.

In a step's markdown, ``[text](lesson:ID)`` links to a lesson's first step, ``lesson:ID/N`` to its
step N and ``lesson:ID/N#NAME`` to a cell (by its id) or a heading (by its anchor) of that step.
A root path ``/lessons/ID/N#NAME`` is read the same way. Pages write each as a URL below the
site's base path, so links keep working under any ``--base-url``; ``validate`` reports a target
that does not exist at its line, with the closest names.
"""

from __future__ import annotations

import difflib
import html
import re
import unicodedata
from collections.abc import Callable, Iterable

from markdown_it.token import Token

from promptdojo.course.model import Diagnostic, Lesson, Link, Location

#: A course link: ``lesson:ID``, ``lesson:ID/N`` or ``lesson:ID/N#NAME`` (or ``/lessons/...``).
COURSE_LINK = re.compile(
    r"(?:lesson:|/lessons/)(?P<lesson>[a-z0-9][a-z0-9-]*)(?:/(?P<step>[0-9]{1,9}))?/?"
    r"(?:#(?P<fragment>[^\s\"'<>]+))?"
)
_HREF = re.compile(r'href="((?:lesson:|/lessons/)[^"]*)"')


def anchor(text: str) -> str:
    """A heading's anchor: ``"Top-p, explained!"`` → ``"top-p-explained"``."""
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-") or "section"


def mark_headings(tokens: list[Token]) -> tuple[tuple[str, str], ...]:
    """Give every heading of ``tokens`` an ``id`` (unique in the step); return (id, text)s."""
    found: list[tuple[str, str]] = []
    used: set[str] = set()
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or index + 1 >= len(tokens):
            continue
        text = "".join(
            child.content for child in tokens[index + 1].children or () if child.content
        ).strip()
        name = base = anchor(text)
        count = 1
        while name in used:
            count += 1
            name = f"{base}-{count}"
        used.add(name)
        token.attrSet("id", name)
        found.append((name, text))
    return tuple(found)


def collect_links(tokens: Iterable[Token], path, first_line: int = 1) -> tuple[Link, ...]:
    """The course links of ``tokens`` (a step's prose, or a hint's whose text starts on the
    file's ``first_line``), each with its line."""
    links: list[Link] = []
    for token in tokens:
        line = token.map[0] + first_line if token.map else None
        for child in token.children or ():
            if child.type in ("softbreak", "hardbreak") and line is not None:
                line += 1
            href = child.attrGet("href") if child.type == "link_open" else None
            if isinstance(href, str) and COURSE_LINK.fullmatch(href):
                links.append(Link(href, Location(path, line)))
    return tuple(links)


def _closest(name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(names)), n=3, cutoff=0.5)
    return f"the closest: {', '.join(close)}" if close else ""


def _problem(link: Link, lessons: dict[str, Lesson]) -> tuple[str, str] | None:
    """What is wrong with ``link``'s target, and a hint; ``None`` when it exists."""
    match = COURSE_LINK.fullmatch(link.target)
    if match is None:
        return None
    lesson = lessons.get(match["lesson"])
    if lesson is None:
        hint = _closest(match["lesson"], lessons) or "write lesson:ID with a lesson's id"
        return f"link to a missing lesson {match['lesson']!r}", hint
    number = int(match["step"]) if match["step"] else 1
    step = lesson.step(number)
    if step is None:
        return (
            f"link to a missing step {number} of {lesson.id!r}",
            f"it has steps 1 to {len(lesson.steps)}",
        )
    fragment = match["fragment"]
    names = [c.id for c in step.cells] + [name for name, _ in step.headings]
    if fragment and fragment not in names:
        hint = _closest(fragment, names) or f"name a cell id or heading anchor of step {number}"
        return f"link to a missing cell or heading {fragment!r} of {lesson.id}/{number}", hint
    return None


def check_links(lessons: Iterable[Lesson], unread: Iterable[str] = ()) -> list[Diagnostic]:
    """A diagnostic for every course link whose lesson, step, cell or heading is missing; links
    into the lessons ``unread`` (not read in this run) are left alone."""
    by_id = {lesson.id: lesson for lesson in lessons}
    skip = set(unread) - set(by_id)
    found: list[Diagnostic] = []
    for lesson in by_id.values():
        for step in lesson.steps:
            for link in step.links:
                match = COURSE_LINK.fullmatch(link.target)
                if match is not None and match["lesson"] in skip:
                    continue
                problem = _problem(link, by_id)
                if problem is not None:
                    found.append(Diagnostic(link.location, *problem))
    return found


def rewrite_links(
    text: str, step_url: Callable[[str, int], str], cells: Callable[[str, int], set[str]]
) -> str:
    """``text`` (rendered prose) with each course link as the URL ``step_url`` gives; a fragment
    naming a cell (``cells(lesson, step)`` holds its ids) points at the cell's element."""

    def url(found: re.Match) -> str:
        match = COURSE_LINK.fullmatch(html.unescape(found[1]))
        if match is None:
            return found[0]
        number = int(match["step"]) if match["step"] else 1
        target = step_url(match["lesson"], number)
        fragment = match["fragment"]
        if fragment:
            known = cells(match["lesson"], number)
            target += f"#cell-{fragment}" if fragment in known else f"#{fragment}"
        return f'href="{html.escape(target, quote=True)}"'

    return _HREF.sub(url, text)
