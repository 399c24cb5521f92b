"""A learner's first visit fetches each file once, and the big ones compressed: from
``promptdojo serve --pyodide-dir`` and from the export behind ``python -m http.server``, with the
course's offline copy made afterwards from what the boot already fetched."""

from __future__ import annotations

import zipfile
from collections import Counter
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from promptdojo.pyodide.compressed import compress
from tests.e2e.conftest import (
    COMPRESSED,
    READY,
    run_code,
    start_server,
    stop_server,
    wait_ready,
)
from tests.e2e.test_export import copy_lessons, export
from tests.support.http_stream import Exchange
from tests.support.shaping_proxy import ShapingProxy
from tests.support.static_host import paths_in_order, plain_server, requested

STEP = "lessons/needs-numpy/1"
OFFLINE_TIMEOUT_MS = 180_000
#: The shaped link of the first visit from `serve`, in Mbit/s: about two seconds for its bytes.
LINK_MBIT = 50


def first_exchange(exchanges: list[Exchange], prefix: str) -> Exchange:
    """The first request for a path starting with ``prefix``."""
    return min((e for e in exchanges if e.path.startswith(prefix)), key=lambda e: e.started)


def fetched(log: Path) -> Counter[str]:
    """How often each path was answered in full (200) in a server's request log."""
    return requested(log, "200")


def first_visit(browser: Browser, url: str) -> dict:
    """Open ``url`` in a fresh profile, wait until Python is ready and the course is kept
    offline; returns the ready phase's detail."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        wait_ready(page)  # across the isolation reload behind a host without headers
        detail = page.evaluate(READY)
        expect(page.locator(".offline-status")).to_have_attribute(
            "data-state", "ready", timeout=OFFLINE_TIMEOUT_MS
        )
        return detail
    finally:
        context.close()


def assert_each_file_once(counts: Counter[str]) -> None:
    """Pages and the service worker's script may be asked again (the isolation reload; the
    offline copy revalidates pages and checks the worker is still current); every other file is
    downloaded once at most."""
    twice = {
        path: n
        for path, n in counts.items()
        if n > 1 and not path.endswith(("/", ".html", "/sw.js")) and "/lessons/" not in path
    }
    assert not twice, f"downloaded more than once: {twice}"


def _export(numpy_release: object, tmp_path: Path) -> Path:
    """The needs-numpy lesson exported at the site's root with its compressed twins."""
    lessons = copy_lessons(tmp_path / "lessons", ("needs-numpy",))
    out = tmp_path / "site"
    export(
        lessons,
        out,
        numpy_release.path,
        tmp_path / "no-cache",
        base_url=None,
        compressed=COMPRESSED,
    )
    return out


def test_the_export_sends_compressed_twins_and_each_file_once(
    browser: Browser, numpy_release: object, tmp_path: Path
) -> None:
    out = _export(numpy_release, tmp_path)
    log = tmp_path / "requests.log"
    with plain_server(out, log) as url:
        detail = first_visit(browser, f"{url}/{STEP}/")
    counts = fetched(log)
    assert detail["restored"] is True
    assert detail["fellBack"] == []
    # numpy came with the snapshot (its libraries loaded before the restore), imported already.
    assert detail["inSnapshot"] == ["numpy"], detail
    assert "numpy" not in detail["importedAfterRestore"], detail
    assert_each_file_once(counts)
    # The big files came as their twins, never as themselves.
    version = numpy_release.version
    assert counts[f"/pyodide/{version}/pyodide.asm.wasm.zst"] == 1, counts
    assert counts[f"/pyodide/{version}/pyodide.asm.wasm"] == 0
    snapshots = [path for path in counts if path.startswith("/snapshot/snapshot-")]
    assert snapshots, counts
    assert all(path.endswith(".bin.zst") for path in snapshots), snapshots
    # The standard library the snapshot was made with, as its twin; never Pyodide's own.
    stdlibs = [path for path in counts if path.startswith("/snapshot/python_stdlib-")]
    assert len(stdlibs) == 1, counts
    assert stdlibs[0].endswith(".zip.zst"), counts
    assert counts[f"/pyodide/{version}/python_stdlib.zip"] == 0, counts
    # numpy came as its compiled wheel's twin, in place of the wheel (promptdojo.web.compiled),
    # and the learner library with its modules' bytecode (the compiled bundle).
    assert detail["bytecode"] == ["promptdojo", "numpy"], detail
    compiled = [path for path in counts if path.startswith("/packages/compiled/")]
    assert compiled, counts
    assert all(path.endswith(".zip.zst") for path in compiled), counts
    # The service worker fetched the boot's first files (the kernel config's earlyFiles) while
    # the page reloaded under it: they were asked for before the reloaded page's kernel worker,
    # which otherwise asks for them, was itself fetched; and still once each (above).
    order = paths_in_order(log)
    worker = next(i for i, path in enumerate(order) if path.startswith("/assets/worker-"))
    snapshot = next(path for path in order if path.startswith("/snapshot/snapshot-"))
    early = [f"/pyodide/{version}/pyodide.asm.wasm.zst", stdlibs[0], snapshot]
    assert all(order.index(path) < worker for path in early), "\n".join(order)


def test_a_damaged_compiled_wheel_costs_time_only(
    browser: Browser, numpy_release: object, tmp_path: Path
) -> None:
    out = _export(numpy_release, tmp_path)
    # One byte of a pyc changed, in the archive and in its twin (a valid zstd frame of it).
    for archive in (out / "packages" / "compiled").glob("*.zip"):
        with zipfile.ZipFile(archive) as opened:
            pyc = next(i for i in opened.infolist() if i.filename.endswith(".pyc"))
        data = bytearray(archive.read_bytes())
        data[pyc.header_offset + 30 + len(pyc.filename) + 100] ^= 0xFF
        archive.write_bytes(bytes(data))
        archive.with_name(archive.name + ".zst").write_bytes(compress(bytes(data), "zstd"))
    log = tmp_path / "requests.log"
    with plain_server(out, log) as url:
        damaged = numpy_without_bytecode(browser, f"{url}/{STEP}/")
        wheels = [path for path, n in fetched(log).items() if path.endswith(".whl") and n == 1]
        assert len(wheels) == 1, fetched(log)
        # Gone from the host altogether (the archive and its twin): the same, on a fresh profile.
        for archive in (out / "packages" / "compiled").iterdir():
            archive.unlink()
        missing = numpy_without_bytecode(browser, f"{url}/{STEP}/")
    # The wheel itself was installed instead; the page said nothing of it (the console does).
    for detail, status, output in (damaged, missing):
        assert detail["bytecode"] == ["promptdojo"], detail
        assert detail["fromWheels"] is True, detail
        assert detail["missing"] == [], detail
        assert detail["fellBack"] == [], detail
        assert status == "Python: ready", status
        assert output == "2.0\n"


def numpy_without_bytecode(browser: Browser, url: str) -> tuple[dict, str, str]:
    """A first visit to ``url``: the ready detail, the status line and a numpy result."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(url)
        wait_ready(page)
        detail = page.evaluate(READY)
        status = page.locator(".kernel-status").inner_text()
        output = run_code(page, "import numpy as np\nprint(np.linalg.inv(np.eye(2)).sum())")
    finally:
        context.close()
    return detail, status, output


@pytest.mark.parametrize("packaged", [True, False], ids=["numpy-in-snapshot", "plain-snapshot"])
def test_serve_sends_each_file_once_and_the_big_ones_in_the_order_the_boot_needs(
    browser: Browser, numpy_release: object, fixture_lessons: Path, tmp_path: Path, packaged: bool
) -> None:
    extra = [] if packaged else ["--no-snapshot-packages"]
    server = start_server(
        fixture_lessons, tmp_path, "--pyodide-dir", str(numpy_release.path), *extra
    )
    try:
        # A link slow enough that the snapshot takes a while to come.
        with ShapingProxy(server.url, rate_mbit=LINK_MBIT, latency_ms=0) as proxy:
            detail = first_visit(browser, f"{proxy.url}/{STEP}")
            exchanges = proxy.exchanges()
    finally:
        stop_server(server)
    snapshot = first_exchange(exchanges, "/snapshot/snapshot-")
    wheel = first_exchange(exchanges, "/packages/compiled/")
    before = snapshot.bytes_before(wheel.started)
    if packaged:
        # A snapshot with numpy in it is restored once numpy's libraries are compiled: the
        # compiled wheel was asked for with the snapshot (here, before a quarter of its bytes),
        # and, smaller, came first, to compile while the rest of the snapshot came.
        assert before < snapshot.wire_bytes / 4, (before, snapshot.wire_bytes)
        assert wheel.finished < snapshot.finished
    else:
        # The compiled wheel was asked for once half the snapshot had come (downloads.js), so
        # that it arrives last and the restore overlaps it; here, with a margin, a quarter.
        assert before >= snapshot.wire_bytes / 4, (before, snapshot.wire_bytes)
        assert wheel.finished > snapshot.finished
    # The learner bundle once nine tenths of the wheel had come (here: half its bytes, a margin),
    # so that numpy installs and imports while it comes.
    bundle = first_exchange(exchanges, "/bundle/")
    before = wheel.bytes_before(bundle.started)
    assert before >= wheel.wire_bytes / 2, (before, wheel.wire_bytes)
    assert bundle.finished > wheel.finished
    assert detail["restored"] is True
    assert detail["inSnapshot"] == (["numpy"] if packaged else []), detail
    # A typical cell ran once, unseen, numpy included, before "ready" (the first Run's compiling).
    assert detail["warmUp"]["numpy"] is True, detail
    assert detail["warmUp"]["ms"] >= 0, detail
    counts = fetched(server.log)
    assert_each_file_once(counts)
    assert counts[f"/pyodide/{numpy_release.version}/pyodide.asm.wasm"] == 1, counts
    # numpy's modules came compiled (its compiled wheel, in place of the wheel), and so did the
    # learner library's (the compiled bundle).
    assert detail["bytecode"] == ["promptdojo", "numpy"], detail
    assert [path for path in counts if path.startswith("/packages/compiled/")], counts
