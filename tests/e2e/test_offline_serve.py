"""The service worker on ``promptdojo serve``: a classroom server that goes down mid-lesson
loses nothing, the page reloads and runs from the course the browser kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import click_run, start_server, stop_server, wait_ready


def test_the_served_course_keeps_working_when_the_server_goes_down(
    browser: Browser, fixture_lessons: Path, tmp_path: Path
) -> None:
    server = start_server(fixture_lessons, tmp_path, "--package-upstream", "http://127.0.0.1:9/")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{server.url}/lessons/runaway/1")
        wait_ready(page)
        mark = page.locator(".offline-status")
        expect(mark).to_have_attribute("data-state", "ready", timeout=120_000)
        stop_server(server)
        page.reload()
        wait_ready(page)
        assert page.evaluate("crossOriginIsolated") is True  # the cached pages keep the headers
        click_run(page, "state")
        after = click_run(page, "after")
        expect(after.locator(".cell-output")).to_have_text("42", timeout=30_000)
        page.get_by_role("link", name="Next step").click()
        expect(page).to_have_url(f"{server.url}/lessons/runaway/2")
    finally:
        context.close()
        if server.process.poll() is None:
            stop_server(server)


pytestmark = pytest.mark.browser
