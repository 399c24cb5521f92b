"""End-to-end fixtures: a real uvicorn server on loopback and a real headless Chromium.

Chromium is Debian's (``/usr/bin/chromium``, or ``PROMPTDOJO_CHROMIUM``), driven by Playwright.
Without it the browser tests are skipped locally and fail under ``CI=true``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

CHROMIUM = Path(os.environ.get("PROMPTDOJO_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


#: The checkout's snapshot cache (``make build`` fills it): every test server shares it, so a
#: snapshot is made once per Pyodide build, not once per server.
SNAPSHOTS = Path(__file__).resolve().parents[2] / ".cache" / "snapshots"
#: Compressed copies of the served Pyodide's files, shared by every server the tests start.
COMPRESSED = Path(__file__).resolve().parents[2] / ".cache" / "compressed"


#: How long a test server may take to answer: longer than the snapshot maker's own limit
#: (``ensure_snapshot``'s 300 s), so that a make too slow ends on that limit and the server's log
#: says so (the server then answers without that snapshot).
SERVER_START_S = 600


def start_server(
    lessons: Path, tmp: Path, *extra: str, python: Path | str = sys.executable
) -> Server:
    """Start ``promptdojo serve`` on a free loopback port and wait until it answers.

    The server restores pages from a memory snapshot in :data:`SNAPSHOTS` unless ``extra``
    says otherwise (``--no-snapshot``, ``--snapshot-cache``). What it has to make first (with
    a release of numpy: the plain snapshot, the one with numpy, the compiled wheels) can take
    minutes on a busy machine while the other test process runs a browser, or wait for that
    process to make the same files: hence the wait of :data:`SERVER_START_S`. A server that
    exits is reported at once, with its log.
    """
    port = _free_port()
    log = tmp / f"server-{port}.log"
    if not {"--no-snapshot", "--snapshot-cache"} & set(extra):
        extra = (*extra, "--snapshot-cache", str(SNAPSHOTS))
    if "--compressed-cache" not in extra:  # made once per file, shared by every test
        extra = (*extra, "--compressed-cache", str(COMPRESSED))
    process = subprocess.Popen(
        [str(python), "-m", "promptdojo", "serve", str(lessons), "--port", str(port), *extra],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        cwd=tmp,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                return Server(url, process, log)
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"server did not answer within {SERVER_START_S} s:\n{log.read_text()}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def server(fixture_lessons: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The fixture lessons served by a real uvicorn."""
    # Port 9 on loopback is closed: package fetches fail at once, as without internet.
    srv = start_server(
        fixture_lessons,
        tmp_path_factory.mktemp("server"),
        "--package-upstream",
        "http://127.0.0.1:9/",
    )
    yield srv
    stop_server(srv)


@pytest.fixture(scope="session")
def numpy_lessons_server(
    real_lessons: Path, numpy_release: object, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The real lessons with Pyodide 0.29.0 and numpy, offline: one server for every module
    that walks them (in Chromium and in the other engines)."""
    srv = start_server(
        real_lessons,
        tmp_path_factory.mktemp("numpy-lessons"),
        "--pyodide-dir",
        str(numpy_release.path),
        "--offline",
    )
    yield srv
    stop_server(srv)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Debian Chromium through Playwright."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(message + "; browser tests never skip under CI=true")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh browser context and page; console errors are kept on ``page.console_errors``."""
    # Playwright's page.route never sees a request the service worker answers (its docs say to
    # block service workers for routing); tests of the service worker open their own contexts.
    context = browser.new_context(service_workers="block")  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.console_errors = []
    page_errors: list[str] = []
    pg.on("console", lambda m: m.type == "error" and pg.console_errors.append(m.text))
    pg.on("pageerror", lambda e: pg.console_errors.append(str(e)))
    pg.on("pageerror", lambda e: page_errors.append(str(e)))
    yield pg
    context.close()
    assert not page_errors, f"uncaught errors in the page: {page_errors}"


AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


@pytest.fixture
def axe_page(browser: object) -> Iterator[Page]:
    """A page whose CSP lets the test inject axe-core (the app itself allows no inline script)."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run `npm ci` (axe-core is a dev dependency)")
    context = browser.new_context(bypass_csp=True)  # type: ignore[attr-defined]
    page = context.new_page()
    yield page
    context.close()


def serious_violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    results = page.evaluate("axe.run(document, { resultTypes: ['violations'] })")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in results["violations"]
        if v["impact"] in {"serious", "critical"}
    ]


BOOT_TIMEOUT_MS = 90_000


def wait_ready(page: Page) -> None:
    """Wait for Python to be ready; a boot that failed fails the test at once, with its message."""
    from playwright.sync_api import expect

    status = page.locator(".kernel-status")
    expect(status).to_have_attribute(
        "data-phase", re.compile("^(ready|error)$"), timeout=BOOT_TIMEOUT_MS
    )
    assert status.get_attribute("data-phase") == "ready", status.inner_text()


def click_run(page: Page, cell_id: str) -> Locator:
    """Press the Run button of cell ``cell_id``; return the cell."""
    cell = page.locator(f"#cell-{cell_id}")
    cell.get_by_role("button", name="Run", exact=True).click()
    return cell


def run(page: Page, cell_id: str) -> None:
    """Run cell ``cell_id`` and wait until it is no longer running."""
    from playwright.sync_api import expect

    cell = click_run(page, cell_id)
    expect(cell.locator(".cell-status")).not_to_have_text("Running…", timeout=30_000)


#: The detail of the kernel's latest "ready" phase: {restored, snapshotFailed, loaded, missing}.
READY = "window.promptdojoKernel.phases.filter(([phase]) => phase === 'ready').at(-1)[1]"


def run_code(page: Page, code: str) -> str:
    """Run ``code`` in the page's kernel (no cell) and return what it printed."""
    return page.evaluate(
        """async (code) => {
          let out = "";
          const onStream = (name, text) => { out += text; };
          const options = { key: "t", cellId: "t", onStream };
          const result = await window.promptdojoKernel.run(code, options);
          return result.ok ? out : `${result.error_type}: ${result.error_message}`;
        }""",
        code,
    )


def fresh_page(browser: Browser, url: str) -> Page:
    """A page in a new browser profile (no HTTP cache), booted."""
    page = browser.new_context().new_page()
    page.goto(url)
    wait_ready(page)
    return page
