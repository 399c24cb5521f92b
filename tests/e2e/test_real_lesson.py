"""The shipped lessons in the browser: every step renders, navigates in place, and passes axe."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from promptdojo.course import discover, load_lesson
from tests.conftest import REAL_LESSONS
from tests.e2e.conftest import Server, serious_violations, start_server, stop_server, wait_ready

LESSONS = [folder.name for folder in discover(REAL_LESSONS)]


@pytest.fixture(scope="module")
def real_server(real_lessons: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_server(
        real_lessons, tmp_path_factory.mktemp("real"), "--package-upstream", "http://127.0.0.1:9/"
    )
    yield server
    stop_server(server)


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_next_walks_every_step_in_place_with_recorded_outputs(
    page: Page, real_server: Server, real_lessons: Path, lesson_id: str
) -> None:
    lesson = load_lesson(real_lessons / lesson_id)
    page.goto(f"{real_server.url}/lessons/{lesson_id}/1")
    page.evaluate("window.__sameDocument = true")
    for step in lesson.steps:
        expect(page.get_by_role("heading", level=1)).to_have_text(step.title)
        expect(page).to_have_url(f"{real_server.url}/lessons/{lesson_id}/{step.number}")
        # Every visible cell has an editor, and recorded outputs stand in until Python is ready.
        expect(page.locator(".cell .cm-editor")).to_have_count(len(page.locator(".cell").all()))
        assert page.locator(".cell-output .recorded").count() > 0
        if step.number < len(lesson.steps):
            # Enter on the link rather than a click: CodeMirror sizes an editor from estimated
            # line heights until it first comes into view, so scrolling the link into view moves
            # it by the editors' correction, and a pointer's press and release can land apart
            # (the click then goes to the step's body). A keyboard press has no position.
            page.get_by_role("link", name="Next step").press("Enter")
    assert page.evaluate("window.__sameDocument") is True
    expect(page.locator(".progress-count")).to_have_text(f"0 / {len(lesson.steps)}")
    wait_ready(page)  # without numpy here: ready, and the status line says so
    expect(page.locator(".kernel-status")).to_contain_text("without numpy")


@pytest.mark.parametrize("lesson_id", LESSONS)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_passes_on_every_step(
    axe_page: Page, real_server: Server, real_lessons: Path, scheme: str, lesson_id: str
) -> None:
    axe_page.emulate_media(color_scheme=scheme)
    found = {}
    for step in load_lesson(real_lessons / lesson_id).steps:
        axe_page.goto(f"{real_server.url}/lessons/{lesson_id}/{step.number}")
        expect(axe_page.locator(".cell .cm-editor").first).to_be_visible()
        found[step.number] = serious_violations(axe_page)
    assert found == {number: [] for number in found}
