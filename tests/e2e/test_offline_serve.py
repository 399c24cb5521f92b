"""The service worker on ``promptdojo serve``: a classroom server that goes down mid-lesson
loses nothing, the page reloads and runs from the course the browser kept."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import (
    READY,
    click_run,
    run_code,
    start_server,
    stop_server,
    wait_ready,
)
from tests.support.static_host import requested

#: The files a boot reads from the offline copy on a return visit, by a part of their URL.
BIG_FILES = (
    "/snapshot/",
    "/bundle/",
    "/snapshot/python_stdlib-",  # the standard library the snapshot was made with
    "pyodide-lock.json",
)
#: The core's WebAssembly, which the browser fetches itself on every visit: its HTTP cache
#: answers, and keeps the compiled code (offline-rules.js, ``keepsCompiledCode``).
CORE_WASM = "pyodide.asm.wasm"


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


def test_a_return_visit_reads_the_big_files_from_the_offline_copy(
    browser: Browser, fixture_lessons: Path, tmp_path: Path
) -> None:
    """Once the course is saved for offline use, the workers read the snapshot, the standard
    library, the bundle and the lock file straight from the browser's cache: no request for them
    reaches the network or crosses the service worker, and the interpreter is still restored from
    the snapshot. The core's WebAssembly comes from the HTTP cache, which keeps its compiled code:
    the server is not asked for it again. A cell's own request, even for a page the cache holds,
    still goes through the service worker (pages come from the network first)."""
    server = start_server(fixture_lessons, tmp_path)
    context = browser.new_context()
    try:
        page = context.new_page()
        first: list[str] = []
        page.on("request", lambda request: first.append(request.url))
        page.goto(f"{server.url}/lessons/hello/1")
        wait_ready(page)
        # The first visit asks for each of them: the check below can see such a request.
        assert all(any(part in url for url in first) for part in (*BIG_FILES, CORE_WASM)), first
        expect(page.locator(".offline-status")).to_have_attribute(
            "data-state", "ready", timeout=120_000
        )
        again: list[str] = []
        page.on("request", lambda request: again.append(request.url))
        page.reload()
        wait_ready(page)
        assert page.evaluate(READY)["restored"] is True
        asked = [url for url in again if any(part in url for part in BIG_FILES)]
        assert asked == [], asked
        # Asked for again, and answered by the HTTP cache: the server saw it once.
        assert any(CORE_WASM in url for url in again), again
        served = [n for path, n in requested(server.log).items() if path.endswith(CORE_WASM)]
        assert served == [1], requested(server.log)
        # Step 3: cached, and not prefetched by step 1 (which prefetches its neighbours).
        other_page = f"{server.url}/lessons/hello/3"
        started = run_code(
            page,
            "import asyncio\nfrom pyodide.http import pyfetch\n"
            f"fetched = asyncio.ensure_future(pyfetch({other_page!r}))",
        )
        assert started == "", started
        assert fetched_status(page) == "200"
        assert other_page in again, again
    finally:
        context.close()
        stop_server(server)


def fetched_status(page: Page, timeout_s: float = 30.0) -> str:
    """The HTTP status of the kernel's ``fetched`` task once done, or the error it raised."""
    deadline = time.monotonic() + timeout_s
    while True:
        out = run_code(page, "print(fetched.result().status if fetched.done() else '')").strip()
        if out or time.monotonic() > deadline:
            return out
        page.wait_for_timeout(100)


pytestmark = pytest.mark.browser
