"""Bad links lose nothing: through a real proxy that cuts a download, damages a compressed file or
drops a response's Content-Encoding, the page falls back or asks again, says what happened once,
and still becomes ready, restored from its snapshot."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.e2e.conftest import (
    COMPRESSED,
    READY,
    SNAPSHOTS,
    start_server,
    stop_server,
    wait_ready,
)
from tests.e2e.test_export import copy_lessons
from tests.support.shaping_proxy import ShapingProxy
from tests.support.static_host import plain_server

STEP = "lessons/hello/1"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The export of a lesson with the built-in core, behind ``python -m http.server``."""
    tmp = tmp_path_factory.mktemp("bad-links")
    lessons = copy_lessons(tmp / "lessons", ("hello",))
    done = subprocess.run(
        [
            *(sys.executable, "-m", "promptdojo", "export", str(tmp / "site")),
            *("--lessons-dir", str(lessons), "--snapshot-cache", str(SNAPSHOTS)),
            *("--compressed-cache", str(COMPRESSED)),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    with plain_server(tmp / "site") as url:
        yield url


def visit(browser: Browser, url: str) -> tuple[dict, str]:
    """The ready detail and the status line of a first visit to ``url``."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        wait_ready(page)
        return page.evaluate(READY), page.locator(".kernel-status").inner_text()
    finally:
        context.close()


def test_a_damaged_compressed_wasm_falls_back_to_the_file(browser: Browser, exported: str) -> None:
    with ShapingProxy(exported, rate_mbit=None, latency_ms=0) as proxy:
        proxy.corrupt(r"pyodide\.asm\.wasm\.zst$", count=64)
        detail, status = visit(browser, f"{proxy.url}/{STEP}/")
        paths = [exchange.path for exchange in proxy.exchanges()]
    assert detail["restored"] is True
    assert any(p.endswith("pyodide.asm.wasm") for p in paths), paths  # the file itself
    assert "compressed copy of pyodide.asm.wasm was not used" in status
    assert status.count("was not used") == 1  # said once


def test_a_snapshot_cut_halfway_is_fetched_again(browser: Browser, exported: str) -> None:
    with ShapingProxy(exported, rate_mbit=None, latency_ms=0) as proxy:
        proxy.cut(r"/snapshot/.*\.zst$", after=500_000)
        detail, status = visit(browser, f"{proxy.url}/{STEP}/")
        snapshots = [e for e in proxy.exchanges() if e.path.startswith("/snapshot/")]
    assert detail["restored"] is True, status  # no cold boot: the snapshot came the second time
    assert len(snapshots) == 2, [e.path for e in snapshots]
    assert "snapshot" in status
    assert "was not used" in status


def test_a_dropped_content_encoding_is_seen_and_decoded(
    browser: Browser, fixture_lessons: Path, tmp_path: Path
) -> None:
    server = start_server(fixture_lessons, tmp_path)
    try:
        with ShapingProxy(server.url, rate_mbit=None, latency_ms=0) as proxy:
            proxy.strip_encoding(r"(pyodide\.asm\.wasm|/snapshot/.*\.bin)$")
            detail, status = visit(browser, f"{proxy.url}/{STEP}")
            stripped = [
                e.path
                for e in proxy.exchanges()
                if e.path.endswith((".wasm", ".bin")) and e.payload_bytes < 5_000_000
            ]
    finally:
        stop_server(server)
    assert len(stripped) == 2, stripped  # both went out compressed, and without their header
    assert detail["restored"] is True
    assert "pyodide.asm.wasm came zstd-compressed without saying so" in status
