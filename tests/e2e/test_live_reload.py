"""`promptdojo serve --reload`: editing a step file refreshes the open page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, start_server, stop_server, wait_ready


@pytest.fixture
def authoring(fixture_lessons: Path, tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    lessons = tmp_path / "lessons"
    shutil.copytree(fixture_lessons / "hello", lessons / "hello")
    server = start_server(lessons, tmp_path, "--reload")
    yield server, lessons / "hello"
    stop_server(server)


def test_editing_a_step_refreshes_the_open_page(page: Page, authoring: tuple[Server, Path]) -> None:
    server, lesson = authoring
    page.goto(f"{server.url}/lessons/hello/1")
    expect(page.locator("h1")).to_have_text("Where does this code run?")
    page.wait_for_timeout(500)  # let the page's event stream connect
    step = lesson / "01-where-am-i.md"
    step.write_text(step.read_text().replace("Where does this code run?", "Edited live"))
    expect(page.locator("h1")).to_have_text("Edited live", timeout=15_000)
    # Python finishes booting before the server stops: no request is cut off mid-flight.
    wait_ready(page)


def test_breaking_a_lesson_shows_its_errors_then_fixing_it_recovers(
    page: Page, authoring: tuple[Server, Path]
) -> None:
    server, lesson = authoring
    page.goto(f"{server.url}/lessons/hello/2")
    page.wait_for_timeout(500)
    step = lesson / "02-errors.md"
    good = step.read_text()
    step.write_text(good.replace("def inverse(x):", "def inverse(x)"))
    expect(page.locator("h1")).to_have_text("This lesson has errors", timeout=15_000)
    expect(page.locator(".diagnostics")).to_contain_text("02-errors.md:6: Python syntax error")
    step.write_text(good)
    expect(page.locator("h1")).to_have_text("Errors point at your line", timeout=15_000)
    wait_ready(page)
