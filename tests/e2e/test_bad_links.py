"""Bad links lose nothing: a download cut halfway or stalled, a damaged compressed file, a host
that drops ``Content-Encoding``. The page still becomes ready, restored from its snapshot, and
says once what happened.

Every byte between Chromium and the real server (``promptdojo serve``, or the export behind
``python -m http.server``) goes through the shaping proxy (tests/support/shaping_proxy.py), which
applies the fault to the first matching response (all matching ones for ``Content-Encoding``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.conftest import ROOT
from tests.e2e.conftest import BOOT_TIMEOUT_MS, COMPRESSED, READY, SNAPSHOTS, Server
from tests.e2e.test_export import copy_lessons
from tests.support.shaping_proxy import ShapingProxy
from tests.support.static_host import plain_server

STEP = "/lessons/hello/1"


def _download_worker_silent_s() -> float:
    """How long a download worker may say nothing before the kernel worker takes its job over,
    read from the one place it is set."""
    source = ROOT / "static/js/kernel/downloads.js"
    found = re.search(r"DOWNLOAD_WORKER_SILENT_MS = ([\d_]+)", source.read_text())
    if found is None:
        raise RuntimeError(f"{source} no longer sets DOWNLOAD_WORKER_SILENT_MS")
    return int(found[1]) / 1000


DOWNLOAD_WORKER_SILENT_S = _download_worker_silent_s()


@pytest.fixture
def proxy(server: Server) -> Iterator[ShapingProxy]:
    """A fast link (no shaping) to the fixture lessons' server, with no faults yet."""
    with ShapingProxy(server.url, rate_mbit=None, latency_ms=0) as shaping:
        yield shaping


#: The page's "ready" mark in milliseconds since the epoch (the proxy stamps with ``time.time()``).
READY_AT = "performance.timeOrigin + performance.getEntriesByName('pd:ready')[0].startTime"


def boot(browser: Browser, proxy: ShapingProxy, step: str = STEP) -> tuple[str, dict | None]:
    """Open the step through the proxy in a fresh context; the status line's phase and the
    "ready" detail (None unless ready)."""
    context = browser.new_context()
    said: list[str] = []  # the page's and its workers' console, for a boot that never ends
    try:
        page = context.new_page()
        page.on("console", lambda message: said.append(f"{message.type}: {message.text}"))
        page.goto(proxy.url + step)
        status = page.locator(".kernel-status")
        try:
            expect(status).to_have_attribute(
                "data-phase", re.compile("^(ready|error)$"), timeout=BOOT_TIMEOUT_MS
            )
        except AssertionError as error:
            faults = [f"{e.path} {e.faults}" for e in proxy.exchanges() if e.faults]
            raise AssertionError(
                f"{error}\nfaults: {faults}\nthe console said:\n" + "\n".join(said)
            ) from None
        phase = status.get_attribute("data-phase") or ""
        if phase != "ready":
            return f"{phase}: {status.inner_text()}", None
        detail = page.evaluate(READY)
        # When "ready" came, as the proxy's clock counts: what the page asks for after it (the
        # offline copy, which fetches a snapshot that was cut once more) is not the boot's.
        at = page.evaluate(READY_AT)
        return f"{phase}: {status.inner_text()}", {**detail, "readyAt": at / 1000}
    finally:
        context.close()


def boot_requests(
    proxy: ShapingProxy, ready: dict, prefix: str = "/snapshot/snapshot-"
) -> list[str]:
    """The requests the boot made for paths starting with ``prefix`` (the snapshot's, unless
    said): those sent before "ready"."""
    return [
        e.path
        for e in proxy.exchanges()
        if e.path.startswith(prefix) and e.started <= ready["readyAt"]
    ]


def faulted(proxy: ShapingProxy) -> list[str]:
    return [f"{e.path} {e.faults}" for e in proxy.exchanges() if e.faults]


def test_through_the_proxy_the_page_boots_as_usual(browser: Browser, proxy: ShapingProxy) -> None:
    status, ready = boot(browser, proxy)
    assert ready is not None, status
    assert ready["restored"], ready
    paths = [e.path for e in proxy.exchanges()]
    assert any("pyodide.asm.wasm" in p for p in paths), paths
    assert any("/snapshot/" in p for p in paths), paths


def test_a_damaged_compressed_snapshot_is_fetched_again(
    browser: Browser, proxy: ShapingProxy
) -> None:
    """The snapshot's zstd fails its checksum in the browser: the download is asked for once
    more, and the page restores it instead of booting from scratch."""
    proxy.corrupt(r"/snapshot/snapshot-")
    status, ready = boot(browser, proxy)
    assert faulted(proxy), proxy.exchanges()
    assert ready is not None, status
    assert ready["restored"], ready
    assert len(boot_requests(proxy, ready)) == 2


def test_a_wasm_download_cut_halfway_still_ends_ready(
    browser: Browser, proxy: ShapingProxy
) -> None:
    proxy.cut(r"pyodide\.asm\.wasm", after=1_000_000)
    status, ready = boot(browser, proxy)
    assert faulted(proxy), proxy.exchanges()
    assert ready is not None, status
    assert ready["restored"], ready


def test_a_snapshot_download_cut_halfway_is_fetched_again(
    browser: Browser, proxy: ShapingProxy
) -> None:
    proxy.cut(r"/snapshot/snapshot-", after=500_000)
    status, ready = boot(browser, proxy)
    assert faulted(proxy), proxy.exchanges()
    assert ready is not None, status
    assert ready["restored"], ready  # no cold boot


def test_a_snapshot_download_that_stalls_halfway_is_fetched_again_by_the_kernel_worker(
    browser: Browser, proxy: ShapingProxy
) -> None:
    """Its download worker stops saying that its job moves on: once its patience is over, the
    kernel worker ends it and fetches the snapshot itself, and the page still restores it."""
    proxy.stall(r"/snapshot/snapshot-", after=500_000)
    status, ready = boot(browser, proxy)
    assert [e.faults for e in proxy.exchanges() if e.faults] == [["stall"]]
    assert ready is not None, status
    assert ready["restored"], ready
    assert ready["downloadedIn"] == "kernel worker", ready
    assert len(boot_requests(proxy, ready)) == 2


def test_a_standard_library_download_cut_halfway_is_fetched_again(
    browser: Browser, proxy: ShapingProxy
) -> None:
    """The archive the snapshot was made with breaks off: asked for once more, and the snapshot
    still restores against it (with any other archive, an import would fail)."""
    proxy.cut(r"/snapshot/python_stdlib-", after=500_000)
    status, ready = boot(browser, proxy)
    assert faulted(proxy), proxy.exchanges()
    assert ready is not None, status
    assert ready["restored"], ready
    asked = [e.path for e in proxy.exchanges() if e.path.startswith("/snapshot/python_stdlib-")]
    assert len(asked) == 2, asked


def test_a_slow_download_that_keeps_moving_stays_in_its_download_worker(
    browser: Browser, server: Server
) -> None:
    """At 5 Mbit/s the snapshot takes longer than a download worker's patience: its bytes keep
    coming, the worker says so, and the job is left to it (one request, no fall back)."""
    with ShapingProxy(server.url, rate_mbit=5, latency_ms=40) as proxy:
        status, ready = boot(browser, proxy)
        assert ready is not None, status
        snapshot = [e for e in proxy.exchanges() if e.path.startswith("/snapshot/snapshot-")]
    assert ready["restored"], ready
    assert ready["downloadedIn"] == "download worker", ready
    assert len(snapshot) == 1, [e.path for e in snapshot]
    took = snapshot[0].finished - snapshot[0].started
    assert took > DOWNLOAD_WORKER_SILENT_S, f"the snapshot came in {took:.1f} s: not a slow link"


def test_a_standard_library_download_that_stalls_halfway_is_fetched_again(
    browser: Browser, proxy: ShapingProxy
) -> None:
    """The kernel worker fetches it itself: once no byte of it has come for its patience, the
    download counts as broken off, and it is asked for once more."""
    proxy.stall(r"/snapshot/python_stdlib-", after=500_000)
    status, ready = boot(browser, proxy)
    assert [e.faults for e in proxy.exchanges() if e.faults] == [["stall"]]
    assert ready is not None, status
    assert ready["restored"], ready
    asked = [e.path for e in proxy.exchanges() if e.path.startswith("/snapshot/python_stdlib-")]
    assert len(asked) == 2, asked


def test_a_standard_library_that_never_comes_whole_fails_the_boot_saying_so(
    browser: Browser, proxy: ShapingProxy
) -> None:
    """Pyodide only logs a standard library it could not fetch, and would go on without one:
    the page says what is missing instead of becoming "ready" with a Python that cannot
    import."""
    proxy.cut(r"/snapshot/python_stdlib-", after=500_000, times=None)
    status, ready = boot(browser, proxy)
    assert ready is None, ready
    assert status.startswith("error:"), status
    assert "the standard library could not be fetched" in status, status


def test_a_host_that_sends_the_big_files_compressed_without_saying_so(
    browser: Browser, proxy: ShapingProxy
) -> None:
    """Chromium takes zstd, whose bytes no boot file starts with: the page decodes them."""
    proxy.strip_encoding(r"\.wasm$|/snapshot/")
    status, ready = boot(browser, proxy)
    stripped = [e.path for e in proxy.exchanges() if e.faults]
    # The wasm, the snapshot and its standard library went out compressed, without the header.
    assert len(stripped) == 3, stripped
    assert ready is not None, status
    assert ready["restored"], ready
    assert "pyodide.asm.wasm came zstd-compressed without saying so" in status


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


def test_a_damaged_compressed_wasm_falls_back_to_the_file(browser: Browser, exported: str) -> None:
    with ShapingProxy(exported, rate_mbit=None, latency_ms=0) as proxy:
        proxy.corrupt(r"pyodide\.asm\.wasm\.zst$", count=64)
        status, ready = boot(browser, proxy, STEP + "/")
        paths = [exchange.path for exchange in proxy.exchanges()]
    assert ready is not None, status
    assert ready["restored"] is True
    assert any(p.endswith("pyodide.asm.wasm") for p in paths), paths  # the file itself
    assert "compressed copy of pyodide.asm.wasm was not used" in status
    assert status.count("was not used") == 1  # said once


def test_a_compressed_snapshot_cut_halfway_is_fetched_again(
    browser: Browser, exported: str
) -> None:
    with ShapingProxy(exported, rate_mbit=None, latency_ms=0) as proxy:
        proxy.cut(r"/snapshot/snapshot-.*\.zst$", after=500_000)
        status, ready = boot(browser, proxy, STEP + "/")
        assert ready is not None, status
        snapshots = boot_requests(proxy, ready)
    assert ready["restored"] is True, status  # no cold boot: the snapshot came the second time
    assert len(snapshots) == 2, snapshots
    assert "snapshot" in status
    assert "was not used" in status


def test_a_compressed_standard_library_cut_halfway_falls_back_to_the_file(
    browser: Browser, exported: str
) -> None:
    with ShapingProxy(exported, rate_mbit=None, latency_ms=0) as proxy:
        proxy.cut(r"/snapshot/python_stdlib-.*\.zst$", after=500_000)
        status, ready = boot(browser, proxy, STEP + "/")
        assert ready is not None, status
        stdlib = boot_requests(proxy, ready, "/snapshot/python_stdlib-")
    assert ready["restored"] is True, status
    assert [p.endswith(".zst") for p in stdlib] == [True, False], stdlib  # then the file itself
    assert "was not used" in status
    assert status.count("was not used") == 1  # said once
