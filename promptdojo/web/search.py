"""The documents course search looks through: one per section of a step (its prose under one
heading, and the code of the cells there), made when the site is served or exported.

The page indexes them with MiniSearch (``static/js/page/search.js``), so search works in an export
and offline (the service worker keeps ``search.json`` with the other files). Each document's URL
opens the step at its heading.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable

from promptdojo.course import Cell, Lesson
from promptdojo.web.urls import Urls

#: Where the documents are served, and written in an export.
SEARCH_URL = "/search.json"
_HEADING = re.compile(r'<h[1-6] id="([^"]+)">(.*?)</h[1-6]>', re.S)
_TAG = re.compile(r"<[^>]+>")


def _text(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def _sections(lesson: Lesson, urls: Urls) -> Iterable[dict]:
    for step in lesson.steps:
        url = urls.step(lesson.id, step.number)
        # [anchor, heading, prose pieces, code pieces]; the first is the step's top.
        sections: list[list] = [["", step.title, [], []]]
        for part in step.parts:
            if isinstance(part, Cell):
                sections[-1][3].append(part.code)
                continue
            pieces = _HEADING.split(part.html)
            sections[-1][2].append(pieces[0])
            for index in range(1, len(pieces), 3):
                anchor, heading, after = pieces[index : index + 3]
                sections.append([anchor, _text(heading), [after], []])
        for anchor, heading, prose, code in sections:
            yield {
                "id": f"{lesson.id}/{step.number}#{anchor}",
                "lesson": lesson.title,
                "step": step.title,
                "heading": heading,
                "text": _text(" ".join(prose)),
                "code": "\n".join(code),
                "url": url + (f"#{anchor}" if anchor else ""),
            }


def search_documents(lessons: Iterable[Lesson], urls: Urls) -> bytes:
    """Every section of ``lessons`` (in course order) as JSON for the page's search."""
    documents = [doc for lesson in lessons for doc in _sections(lesson, urls)]
    return json.dumps(documents, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
