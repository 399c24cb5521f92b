"""HTML pages: the lesson index and one page per step."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from promptdojo.course import Lesson
from promptdojo.web.pyodide_files import BUNDLE_URL, PACKAGES_URL

router = APIRouter()


def _lesson(request: Request, lesson_id: str) -> Lesson:
    lesson = request.app.state.catalog.lessons.get(lesson_id)
    if lesson is None:
        raise HTTPException(404, f"There is no lesson called “{lesson_id}”.")
    return lesson


@router.get("/", include_in_schema=False)
async def index(request: Request) -> Response:
    """Every lesson with its title, chapter and number of steps."""
    catalog = request.app.state.catalog
    lessons = sorted(catalog.lessons.values(), key=lambda lesson: lesson.id)
    return request.app.state.templates.TemplateResponse(
        request, "index.html", {"lessons": lessons}, headers={"cache-control": "no-cache"}
    )


@router.get("/lessons/{lesson_id}", include_in_schema=False)
async def lesson_start(request: Request, lesson_id: str) -> Response:
    """A lesson's own URL opens its first step."""
    lesson = _lesson(request, lesson_id)
    return RedirectResponse(f"/lessons/{lesson.id}/1", status_code=307)


@router.get("/lessons/{lesson_id}/{number}", include_in_schema=False)
async def step_page(request: Request, lesson_id: str, number: str) -> Response:
    """One step: prose, editable cells, and the kernel's configuration."""
    lesson = _lesson(request, lesson_id)
    step = lesson.step(int(number)) if number.isdigit() else None
    if step is None:
        raise HTTPException(
            404,
            f"“{lesson.title}” has steps 1 to {len(lesson.steps)}; there is no step “{number}”.",
        )
    state = request.app.state
    kernel = {
        "workerUrl": state.manifest.url("worker.js"),
        "pyodideUrl": state.manifest.pyodide_url,
        "packagesUrl": PACKAGES_URL + "/",
        "bundleUrl": f"{BUNDLE_URL}/{state.bundle.filename}",
        "packages": list(lesson.packages),
        "lesson": lesson.id,
        "step": step.number,
    }
    return state.templates.TemplateResponse(
        request,
        "step.html",
        {"lesson": lesson, "step": step, "kernel": kernel},
        headers={"cache-control": "no-cache"},
    )
