"""Pages restore Python from a memory snapshot, and boot from scratch when it fails.

The server makes the snapshot (``promptdojo.pyodide.snapshot``) for the Pyodide it serves; the
worker fetches it with the page, checks its SHA-256 and restores it. Anything that goes wrong
(damaged bytes, a snapshot of another Pyodide) ends in a cold boot that the status line names
once, and the page works as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.dist import core_dir
from promptdojo.pyodide.release import Release
from promptdojo.pyodide.snapshot import ensure_snapshot
from tests.e2e.conftest import (
    READY,
    SNAPSHOTS,
    Server,
    fresh_page,
    run_code,
    start_server,
    stop_server,
    wait_ready,
)
from tests.support.snapshots import damaged, plant

FRESH = (
    "import random, os, secrets\nprint(random.random(), os.urandom(8).hex(), secrets.token_hex(8))"
)
SEEDED = "import random\nrandom.seed(1)\nprint(random.random())"


def serve_with(cache: Path, fixture_lessons: Path, tmp: Path) -> Server:
    return start_server(
        fixture_lessons,
        tmp,
        "--snapshot-cache",
        str(cache),
        "--package-upstream",
        "http://127.0.0.1:9/",
    )


def test_pages_restore_and_randomness_is_fresh_after_every_restore(
    browser: Browser, server: Server
) -> None:
    printed = []
    for _ in range(2):
        # A lesson without a seed: a seeded one seeds \`random\` as soon as Python is ready.
        page = fresh_page(browser, f"{server.url}/lessons/runtime/3")
        assert page.evaluate(READY)["restored"] is True
        expect(page.locator(".kernel-status")).to_have_text("Python: ready")
        printed.append(run_code(page, FRESH).split())
        # A seed gives the numbers it gives anywhere (CPython's value for seed 1).
        assert run_code(page, SEEDED) == "0.13436424411240122\n"
        page.context.close()
    first, second = printed
    assert len(first) == len(second) == 3
    assert all(a != b for a, b in zip(first, second, strict=True)), printed


def test_a_snapshot_damaged_after_the_server_started_means_a_cold_boot_said_once(
    page: Page, fixture_lessons: Path, tmp_path: Path
) -> None:
    # The server re-hashes the cached snapshot as it starts (a damaged one is made again,
    # test_snapshot_files.py); one damaged on disk later, or on the way, the page catches.
    real = ensure_snapshot(core_dir(), build_bundle(), SNAPSHOTS)
    cache = tmp_path / "snapshots"
    plant(cache, core_dir(), real.path.read_bytes())
    server = serve_with(cache, fixture_lessons, tmp_path)
    data, digest = damaged(core_dir())
    plant(cache, core_dir(), data, digest=digest)
    try:
        page.goto(f"{server.url}/lessons/hello/1")
        wait_ready(page)
        status = page.locator(".kernel-status")
        expect(status).to_contain_text(
            "Python: ready (started from scratch: the snapshot is damaged"
        )
        assert page.evaluate(READY)["restored"] is False
        assert run_code(page, "print(6 * 7)") == "42\n"
    finally:
        stop_server(server)


@pytest.fixture
def foreign_cache(numpy_release: Release, tmp_path: Path) -> Path:
    """The 0.29.0 release's snapshot, planted (with its true digest) as the built-in core's."""
    other = ensure_snapshot(numpy_release.path, build_bundle(), SNAPSHOTS)
    plant(tmp_path / "snapshots", core_dir(), other.path.read_bytes())
    return tmp_path / "snapshots"


def test_a_snapshot_of_another_pyodide_means_a_cold_boot(
    page: Page, foreign_cache: Path, fixture_lessons: Path, tmp_path: Path
) -> None:
    server = serve_with(foreign_cache, fixture_lessons, tmp_path)
    try:
        page.goto(f"{server.url}/lessons/hello/1")
        wait_ready(page)
        expect(page.locator(".kernel-status")).to_contain_text(
            "Python: ready (started from scratch: the snapshot did not restore"
        )
        assert run_code(page, "print(6 * 7)") == "42\n"
    finally:
        stop_server(server)


@pytest.fixture
def cold_server(fixture_lessons: Path, tmp_path: Path) -> Iterator[Server]:
    server = start_server(fixture_lessons, tmp_path, "--no-snapshot")
    yield server
    stop_server(server)


def test_no_snapshot_boots_from_scratch_and_offers_none(page: Page, cold_server: Server) -> None:
    page.goto(f"{cold_server.url}/lessons/hello/1")
    wait_ready(page)
    assert page.evaluate(READY)["restored"] is False
    expect(page.locator(".kernel-status")).to_have_text("Python: ready")
    assert page.evaluate("window.promptdojoKernel.config.snapshot") is None
    assert page.locator("link[href^='/snapshot/']").count() == 0
