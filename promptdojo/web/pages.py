"""HTML pages: the lesson index and one page per step.

Pages depend only on the lesson catalog and the built assets, so each is rendered once per catalog
and served from memory with an ETag; a reload (``--reload``) builds a new catalog and so new pages.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from markupsafe import Markup

from promptdojo.course import Lesson
from promptdojo.course.imports import lesson_imports
from promptdojo.course.records import code_hash, stale_records
from promptdojo.web.accept import accepts
from promptdojo.web.contract import kernel_config, step_data
from promptdojo.web.course_map import course_map
from promptdojo.web.headers import READ_METHODS
from promptdojo.web.search import SEARCH_URL, search_documents
from promptdojo.web.site import site_of

router = APIRouter()

PAGE_HEADERS = {"cache-control": "no-cache"}
#: A step number as a URL gives it: ASCII digits, not too many for ``int`` (``"²".isdigit()``
#: is true, and Python refuses to convert a number of thousands of digits).
STEP_NUMBER = re.compile(r"[0-9]{1,9}")


class BrokenLessonError(Exception):
    """In development mode, a request for a lesson that failed to load."""

    def __init__(self, folder: str, diagnostics: list) -> None:
        self.folder = folder
        self.diagnostics = diagnostics


def _lesson(request: Request, lesson_id: str) -> Lesson:
    site = site_of(request)
    catalog, dev = site.catalog, site.dev
    lesson = catalog.lesson(lesson_id, dev)
    if lesson is None:
        for folder, diagnostics in catalog.broken.items():
            if folder.name != lesson_id:
                continue
            if dev:
                raise BrokenLessonError(folder.name, diagnostics)
            # Not "no such lesson": a learner's link or bookmark is right, the lesson is away.
            raise HTTPException(
                503,
                f"The lesson “{lesson_id}” is being fixed and will be back soon: try again "
                "later, or pick another lesson on the course map (/).",
                headers={"retry-after": "300"},
            )
        raise HTTPException(404, unknown_lesson(lesson_id, catalog, dev))
    return lesson


def unknown_lesson(lesson_id: str, catalog, dev: bool) -> str:
    """The 404 text for ``lesson_id``: which lessons there are, and where they start."""
    offered = dict(catalog.lessons)
    if dev:
        offered.update({k: v for k, v in catalog.drafts.items() if k not in offered})
    if not offered:
        return f"There is no lesson called “{lesson_id}”, and no lessons are served here yet."
    names = ", ".join(
        f"“{lesson.title}” (/lessons/{lesson.id}/1)"
        for lesson in sorted(offered.values(), key=lambda lesson: lesson.id)
    )
    lessons = "lesson is" if len(offered) == 1 else "lessons are"
    return f"There is no lesson called “{lesson_id}”. The {lessons}: {names}."


@dataclass(frozen=True)
class CachedPage:
    """A rendered page, its gzip form (compressed once, not per request) and their ETags."""

    body: bytes
    gzipped: bytes
    etag: str

    @classmethod
    def of(cls, body: bytes) -> CachedPage:
        digest = hashlib.sha256(body).hexdigest()[:32]
        return cls(body=body, gzipped=gzip.compress(body, 6, mtime=0), etag=f'"{digest}"')


def _cached_page(
    request: Request, key: tuple, render: Callable[[], str], media: str = "text/html"
) -> Response:
    """Serve the page ``key`` from the catalog's page cache, rendering it on first use."""
    pages = site_of(request).catalog.pages
    page = pages.get(key)
    if page is None:
        page = pages[key] = CachedPage.of(render().encode("utf-8"))
    zipped = accepts(request.headers.get("accept-encoding", ""), "gzip")
    # Each encoding is its own representation, with its own ETag.
    etag = page.etag[:-1] + '-gz"' if zipped else page.etag
    headers = {**PAGE_HEADERS, "etag": etag, "vary": "accept-encoding"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    if zipped:
        headers["content-encoding"] = "gzip"
    body = page.gzipped if zipped else page.body
    return Response(body, media_type=f"{media}; charset=utf-8", headers=headers)


def attribute_json(value: object) -> Markup:
    """``value`` as JSON for a single-quoted HTML attribute: compact, and escaping only what
    such an attribute must (a row of the course map per lesson: a 300-lesson map was half
    ``&#34;`` and spaces)."""
    text = json.dumps(value, separators=(",", ":"))
    return Markup(text.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;"))


def _render(request: Request, name: str, context: dict) -> str:
    return site_of(request).templates.get_template(name).render(context)


@router.api_route("/", methods=READ_METHODS, include_in_schema=False)
async def index(request: Request) -> Response:
    """Every lesson with its title, chapter and number of steps."""
    site = site_of(request)
    catalog, dev = site.catalog, site.dev

    def render() -> str:
        parts = course_map(catalog)
        lessons = [catalog.lessons[i] for i in catalog.order if i in catalog.lessons]
        # Per lesson, [[step number, [exercise ids]], ...]: the page counts steps done from it.
        exercises_by_step = {
            lesson.id: attribute_json(
                [[s.number, [e.id for e in s.exercises]] for s in lesson.steps]
            )
            for lesson in lessons
        }
        context = {
            "course_title": catalog.course.title,
            "parts": parts,
            "folders": catalog.folders,
            "available": lessons,
            "course_problems": catalog.course_problems,
            "exercises_by_step": exercises_by_step,
            "step_pattern": site.urls.step_pattern(),
            "search_url": site.urls.of(SEARCH_URL),
            "dev": dev,
        }
        return _render(request, "index.html", context)

    return _cached_page(request, ("index",), render)


@router.api_route(SEARCH_URL, methods=READ_METHODS, include_in_schema=False)
async def search(request: Request) -> Response:
    """What the course search looks through (promptdojo.web.search), in course order."""
    catalog = site_of(request).catalog

    def render() -> str:
        lessons = [catalog.lessons[i] for i in catalog.order if i in catalog.lessons]
        return search_documents(lessons, site_of(request).urls).decode("utf-8")

    return _cached_page(request, ("search",), render, "application/json")


@router.api_route("/lessons/{lesson_id}", methods=READ_METHODS, include_in_schema=False)
async def lesson_start(request: Request, lesson_id: str) -> Response:
    """A lesson's own URL opens its first step."""
    lesson = _lesson(request, lesson_id)
    return RedirectResponse(site_of(request).urls.step(lesson.id, 1), status_code=307)


@router.api_route("/lessons/{lesson_id}/{number}", methods=READ_METHODS, include_in_schema=False)
async def step_page(request: Request, lesson_id: str, number: str) -> Response:
    """One step: prose, editable cells, recorded outputs, and the kernel's configuration."""
    lesson = _lesson(request, lesson_id)
    step = lesson.step(int(number)) if STEP_NUMBER.fullmatch(number) else None
    if step is None:
        shown = number if len(number) <= 20 else number[:20] + "…"
        raise HTTPException(
            404,
            f"“{lesson.title}” has steps 1 to {len(lesson.steps)}; there is no step “{shown}”.",
        )
    site = site_of(request)
    # The wheels the server has on hand change as it fetches them: they are part of the page.
    wheels = site.packages.on_hand(lesson.packages)
    imports = site.catalog.imports.get(lesson.id)
    if imports is None:
        imports = site.catalog.imports[lesson.id] = lesson_imports(lesson)

    def render() -> str:
        recorded = site.catalog.records.get((lesson.id, step.number), {})
        context = {
            "lesson": lesson,
            "step": step,
            "kernel": kernel_config(site, lesson, wheels, imports),
            "step_data": step_data(lesson, step),
            "recorded": recorded,
            # Why a record is stale (its cell, or a cell above it, changed since): marked.
            "stale": stale_records(step, recorded),
            "starter_hash": code_hash,
            # Only a lesson with mistakes (served in development) has any.
            "step_problems": step.problems,
            "lesson_problems": lesson.lesson_problems,
            "next_lesson": site.catalog.next_lesson(lesson.id),
            "chapter": site.catalog.chapter_of(lesson.id),
        }
        return _render(request, "step.html", context)

    on_hand = tuple(entry["file_name"] for entry in wheels)
    return _cached_page(request, ("step", lesson.id, step.number, on_hand), render)
