"""The static export in Chromium, behind real static hosts: ``python -m http.server`` (no
headers: the service worker supplies isolation) and a header-setting one that applies the
export's ``_headers``. Lessons run (numpy included), Stop stops, steps swap in place, edits
survive a reload, the course works offline once opened, and a new export replaces it whole.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.conftest import FIXTURE_LESSONS
from tests.e2e.conftest import READY, SNAPSHOTS, click_run, run_code, wait_ready
from tests.support.static_host import headers_server, holding_server, plain_server, requested

LESSONS = ("hello", "needs-numpy", "runaway")
OFFLINE_TIMEOUT_MS = 120_000


def export(
    lessons: Path,
    out: Path,
    release: Path,
    cache: Path,
    *,
    base_url: str | None = "/course/",
    compressed: Path | None = None,
) -> str:
    """Run ``promptdojo export`` below ``base_url`` (the site's root with None), with compressed
    copies from ``compressed`` if given; return the version it wrote."""
    command = [sys.executable, "-m", "promptdojo", "export", str(out)]
    command += ["--lessons-dir", str(lessons), "--pyodide-dir", str(release)]
    command += ["--package-cache", str(cache), "--snapshot-cache", str(SNAPSHOTS)]
    if base_url is not None:
        command += ["--base-url", base_url]
    if compressed is not None:
        command += ["--compressed-cache", str(compressed)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return (out / ".promptdojo-export").read_text().split()[-1]


def copy_lessons(into: Path, names: tuple[str, ...] = LESSONS) -> Path:
    for name in names:
        shutil.copytree(FIXTURE_LESSONS / name, into / name)
    return into


@pytest.fixture(scope="module")
def site(numpy_release: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose ``course/`` is the export of the fixture lessons, with numpy."""
    tmp = tmp_path_factory.mktemp("export")
    lessons = copy_lessons(tmp / "lessons")
    export(lessons, tmp / "site" / "course", numpy_release.path, tmp / "no-cache")
    return tmp / "site"


@pytest.fixture(scope="module", params=["http.server", "_headers"])
def host(request: pytest.FixtureRequest, site: Path) -> Iterator[str]:
    """The export's URL behind each static host."""
    if request.param == "http.server":
        with plain_server(site) as url:
            yield url + "/course/"
    else:
        with headers_server(site, site / "course" / "_headers") as url:
            yield url + "/course/"


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh profile: no service worker, cache or storage from another test."""
    ctx = browser.new_context()
    yield ctx
    ctx.close()


def open_page(context: BrowserContext, url: str) -> Page:
    """A page that records every failed request, opened at ``url`` and booted."""
    page = context.new_page()
    page.failed = []
    page.on("response", lambda r: r.status >= 400 and page.failed.append(f"{r.status} {r.url}"))
    # A reload under the service worker aborts what the first load was fetching: not a failure.
    page.on(
        "requestfailed",
        lambda r: "ERR_ABORTED" not in (r.failure or "") and page.failed.append(f"failed {r.url}"),
    )
    # The inline isolation script must run under the page's CSP (allowed by its hash).
    page.on(
        "console",
        lambda m: "Content Security Policy" in m.text and page.failed.append(f"CSP: {m.text}"),
    )
    page.goto(url)
    wait_ready(page)
    return page


def wait_offline_ready(page: Page, version: str | None = None) -> str:
    """Wait for the "available offline" mark (of ``version``, when given); return its version."""
    mark = page.locator(".offline-status")
    if version is not None:
        # The previous version's worker may say it is ready first; the new one then takes over.
        expect(mark).to_have_attribute("data-version", version, timeout=OFFLINE_TIMEOUT_MS)
    expect(mark).to_have_attribute("data-state", "ready", timeout=OFFLINE_TIMEOUT_MS)
    expect(mark).to_have_text("✓ Available offline")
    return mark.get_attribute("data-version")


def test_a_numpy_lesson_runs_isolated_from_the_snapshot(context: BrowserContext, host: str) -> None:
    page = open_page(context, host + "lessons/needs-numpy/1/")
    assert page.evaluate("crossOriginIsolated") is True  # headers or the service worker
    assert page.evaluate(READY)["restored"] is True
    assert page.evaluate(READY)["loaded"] == ["numpy"]
    # The snapshot and numpy's wheel came through the kernel worker's own download worker.
    assert page.evaluate(READY)["downloadedIn"] == "download worker"
    cell = page.locator(".cell").first
    click_run(page, cell.get_attribute("data-cell-id"))
    expect(cell.locator(".cell-status")).to_contain_text("Done", timeout=30_000)
    assert run_code(page, "import numpy as np\nprint(int(np.arange(10).sum()))") == "45\n"
    assert page.failed == []


def test_a_first_visit_without_headers_fetches_the_big_files_only_once_isolated(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    """The page that reloads under the service worker asks for none of Pyodide, the snapshot,
    the bundle or the wheels: only the reloaded, isolated page does, once each. The inline
    script that registers the worker and offline.js, which asks it to keep the course, name one
    worker. The host's own log counts the big files: the snapshot and the wheels come through
    the kernel worker's download workers, whose requests the browser's events may miss."""
    context = browser.new_context()
    log = tmp_path / "requests.log"
    try:
        with plain_server(site, log) as url:
            page = context.new_page()
            events: list[tuple[str, str]] = []
            page.on("request", lambda r: events.append(("request", r.url)))
            page.on(
                "framenavigated",
                lambda f: f == page.main_frame and events.append(("document", f.url)),
            )
            csp = []
            page.on("console", lambda m: "Content Security Policy" in m.text and csp.append(m.text))
            page.goto(url + "/course/lessons/needs-numpy/1/")
            wait_ready(page)
            assert page.evaluate("crossOriginIsolated") is True
            big = ("/pyodide/", "/snapshot/", "/bundle/", "/packages/")
            # The first "document" is the first visit; the second, the reload under the worker.
            documents = [i for i, (kind, _) in enumerate(events) if kind == "document"]
            assert len(documents) >= 2, events
            before = [u for kind, u in events[: documents[1]] if kind == "request"]
            after = [u for kind, u in events[documents[1] :] if kind == "request"]
            assert [u for u in before if any(part in u for part in big)] == []
            assert any("/pyodide.asm.wasm" in u for u in after), after
            # numpy comes as its compiled wheel (promptdojo.web.compiled). Each big file is asked
            # for once: the page's own snapshot (the one with numpy) by the boot; the plain one,
            # which the course's lessons without numpy restore, only by the offline copy, which
            # may have begun.
            counts = requested(log)
            config = page.evaluate(
                "JSON.parse(document.querySelector('meta[name=promptdojo-kernel]').content)"
            )
            own = config["snapshot"]["url"].rsplit("/", 1)[1]  # fetched as its zstd twin here
            assert sum(n for path, n in counts.items() if own in path) == 1, (own, counts)
            for wanted in ("/pyodide.asm.wasm", "/snapshot/snapshot-", "/packages/compiled/numpy-"):
                asked = {path: n for path, n in counts.items() if wanted in path}
                assert asked, (wanted, counts)
                assert set(asked.values()) == {1}, (wanted, asked)
            assert page.evaluate(READY)["restored"] is True
            wait_offline_ready(page)
            workers = page.evaluate(
                """async () => (await navigator.serviceWorker.getRegistrations())
                  .map((r) => [r.scope, r.active.scriptURL])"""
            )
            assert workers == [[url + "/course/", url + "/course/sw.js"]]
            assert csp == []
    finally:
        context.close()


def test_a_visit_that_starts_on_the_index_needs_no_reload(browser: Browser, site: Path) -> None:
    """The index registers the service worker too: once it is active, a step opened from the
    index is isolated by it on its first load."""
    context = browser.new_context()
    try:
        with plain_server(site) as url:
            page = context.new_page()
            page.goto(url + "/course/")
            assert page.evaluate("navigator.serviceWorker.ready.then((r) => Boolean(r.active))")
            page.get_by_role("link", name="Cells that do not stop by themselves").click()
            expect(page).to_have_url(url + "/course/lessons/runaway/1/")
            wait_ready(page)
            assert page.evaluate("crossOriginIsolated") is True
            navigation = "performance.getEntriesByType('navigation')[0].type"
            assert page.evaluate(navigation) == "navigate"  # not "reload"
    finally:
        context.close()


def test_stop_ends_an_endless_loop_and_steps_swap_in_place(
    context: BrowserContext, host: str
) -> None:
    page = open_page(context, host + "lessons/runaway/1/")
    spin = click_run(page, "spin")
    expect(spin.locator(".cell-status")).to_have_text("Running…")
    spin.get_by_role("button", name="Stop").click()
    expect(spin.locator(".cell-status")).to_have_text("Stopped: you pressed Stop", timeout=5_000)
    expect(spin.locator(".cell-output")).to_contain_text("KeyboardInterrupt")
    page.evaluate("window.samePage = true")
    page.get_by_role("link", name="Next step").click()
    expect(page).to_have_url(host + "lessons/runaway/2/")
    expect(page.locator("main h1")).not_to_have_text("Runaway cells")
    assert page.evaluate("window.samePage") is True  # swapped in place, the worker kept
    page.get_by_role("link", name="Cells that do not stop by themselves").click()
    expect(page).to_have_url(host)
    expect(page.locator(".lesson-list li")).to_have_count(len(LESSONS))
    assert page.failed == []


def test_an_edit_survives_a_reload(context: BrowserContext, host: str) -> None:
    page = open_page(context, host + "lessons/runaway/1/")
    page.locator("#cell-state .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("a = 1000")
    page.get_by_role("link", name="Next step").click()  # leaving the step saves at once
    page.reload()
    wait_ready(page)
    page.get_by_role("link", name="Previous step").click()
    expect(page.locator("#cell-state .cm-content")).to_have_text("a = 1000")
    page.reload()
    expect(page.locator("#cell-state .cm-content")).to_have_text("a = 1000")


def test_without_isolation_cells_run_and_stop_restarts_python(browser: Browser, site: Path) -> None:
    """No headers and no service worker: no SharedArrayBuffer, and the page says so once."""
    context = browser.new_context(service_workers="block")
    try:
        with plain_server(site) as url:
            page = open_page(context, url + "/course/lessons/runaway/1/")
            assert page.evaluate("crossOriginIsolated") is False
            status = page.locator(".kernel-status")
            expect(status).to_contain_text("Stop restarts Python and replays the step")
            click_run(page, "state")
            expect(page.locator("#cell-state .cell-status")).to_contain_text("Done")
            spin = click_run(page, "spin")
            expect(spin.locator(".cell-status")).to_have_text("Running…")
            spin.get_by_role("button", name="Stop").click()
            expect(spin.locator(".cell-status")).to_contain_text(
                "Python was restarted (you pressed Stop, and this page cannot interrupt Python); "
                "replayed 1 earlier cell(s).",
                timeout=30_000,
            )
            after = click_run(page, "after")
            expect(after.locator(".cell-output")).to_have_text("42", timeout=60_000)
    finally:
        context.close()


def test_a_service_worker_that_cannot_install_leaves_a_working_page(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    """No headers, and the worker's script is missing: the first page, stopped while the worker
    registers, reloads once, and the reloaded page runs cells without isolation and says why."""
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    (broken / "course" / "sw.js").unlink()
    context = browser.new_context()
    try:
        with plain_server(broken) as url:
            page = context.new_page()
            documents = []
            page.on("request", lambda r: r.resource_type == "document" and documents.append(r.url))
            page.goto(url + "/course/lessons/runaway/1/")
            wait_ready(page)
            assert page.evaluate("crossOriginIsolated") is False
            assert len(documents) == 2, documents  # the first load, then one reload
            expect(page.locator(".kernel-status")).to_contain_text(
                "Stop restarts Python and replays the step: the service worker did not install"
            )
            click_run(page, "state")
            expect(page.locator("#cell-state .cell-status")).to_contain_text("Done")
    finally:
        context.close()


@pytest.mark.parametrize("broken", ["missing", "throwing", "silent"])
def test_a_download_worker_that_fails_leaves_its_downloads_to_the_kernel_worker(
    browser: Browser, site: Path, tmp_path: Path, broken: str
) -> None:
    """The download worker's script is gone, throws, or never answers (WebKit was seen to leave
    one hanging): the snapshot and numpy's wheel still arrive, restored and prepared, fetched by
    the kernel worker, and the console says why."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    (script,) = (copy / "course" / "assets").glob("download-worker-*.js")
    if broken == "missing":
        script.unlink()
    elif broken == "throwing":
        script.write_text('throw new Error("a broken download worker");\n')
    else:
        script.write_text("self.onmessage = () => {};\n")
    context = browser.new_context()
    try:
        with headers_server(copy, copy / "course" / "_headers") as url:
            page = context.new_page()
            warnings: list[str] = []
            page.on("console", lambda m: "downloading in" in m.text and warnings.append(m.text))
            page.goto(url + "/course/lessons/needs-numpy/1/")
            wait_ready(page)
            ready = page.evaluate(READY)
            assert ready["downloadedIn"] == "kernel worker", ready
            assert ready["restored"] is True, ready
            assert ready["fromWheels"] is True, ready
            assert run_code(page, "import numpy as np\nprint(int(np.arange(5).sum()))") == "10\n"
            assert len(warnings) == 1, warnings
            if broken == "silent":
                assert "the download worker said nothing for 10 s" in warnings[0]
            else:
                assert "the download worker failed" in warnings[0]
            if broken == "throwing":
                assert "a broken download worker" in warnings[0]
    finally:
        context.close()


def test_a_claim_that_never_settles_holds_up_no_request(
    browser: Browser, site: Path, tmp_path: Path
) -> None:
    """Firefox can leave the service worker's ``clients.claim()`` unsettled (seen with a page
    whose own worker never started), and every request of the scope waits for the worker's
    activation. Here the claim never settles: the first page still reloads under the worker
    and boots isolated, the offline copy completes, and a navigation to another lesson comes
    through the worker."""
    stuck = tmp_path / "site"
    shutil.copytree(site, stuck)
    worker = stuck / "course" / "sw.js"
    worker.write_text("self.clients.claim = () => new Promise(() => {});\n" + worker.read_text())
    context = browser.new_context()
    try:
        with plain_server(stuck) as url:
            page = open_page(context, url + "/course/lessons/hello/1/")
            assert page.evaluate("crossOriginIsolated") is True
            wait_offline_ready(page)
            page.goto(url + "/course/lessons/runaway/1/")
            wait_ready(page)
            assert page.evaluate("crossOriginIsolated") is True
            assert page.evaluate("navigator.serviceWorker.controller?.state") == "activated"
            after = click_run(page, "state")
            expect(after.locator(".cell-status")).to_contain_text("Done", timeout=30_000)
    finally:
        context.close()


def test_the_course_runs_offline_once_opened(browser: Browser, site: Path) -> None:
    """The host goes down and the network is cut: a reload still boots and runs numpy."""
    context = browser.new_context()
    try:
        with plain_server(site) as url:
            page = open_page(context, url + "/course/lessons/needs-numpy/1/")
            wait_offline_ready(page)
        context.set_offline(True)  # and the server is gone too
        page.reload()
        wait_ready(page)
        assert page.evaluate(READY)["loaded"] == ["numpy"]
        assert page.evaluate(READY)["downloadedIn"] == "download worker"  # it is cached too
        assert (
            run_code(page, "import numpy as np\nprint(np.ones(3).tolist())") == "[1.0, 1.0, 1.0]\n"
        )
        page.get_by_role("link", name="promptdojo").click()  # the index, from the cache
        expect(page.locator(".lesson-list li")).to_have_count(len(LESSONS))
        page.goto(url + "/course/lessons/runaway/1/")  # another lesson, never opened online
        wait_ready(page)
        after = click_run(page, "state")
        expect(after.locator(".cell-status")).to_contain_text("Done", timeout=30_000)
    finally:
        context.close()


def test_a_new_export_replaces_the_cached_course_and_keeps_edits(
    browser: Browser, numpy_release: object, tmp_path: Path
) -> None:
    lessons = copy_lessons(tmp_path / "lessons", ("runaway",))
    out = tmp_path / "site" / "course"
    args = (numpy_release.path, tmp_path / "no-cache")
    v1 = export(lessons, out, *args)
    context = browser.new_context()
    try:
        with plain_server(tmp_path / "site") as url:
            step = url + "/course/lessons/runaway/1/"
            page = open_page(context, step)
            assert wait_offline_ready(page) == v1
            page.locator("#cell-state .cm-content").click()
            page.keyboard.press("Control+a")
            page.keyboard.type("a = 7")
            page.get_by_role("link", name="Next step").click()  # saved
            source = lessons / "runaway" / "01-runaway.md"
            source.write_text(source.read_text().replace("Runaway cells", "Runaway cells, v2"))
            v2 = export(lessons, out, *args)
            assert v2 != v1
            page.goto(step)
            wait_ready(page)
            expect(page.locator("main h1")).to_have_text("Runaway cells, v2")
            expect(page.locator("#cell-state .cm-content")).to_have_text("a = 7")
            assert wait_offline_ready(page, v2) == v2
            names = page.evaluate("caches.keys()")
            assert [n for n in names if n.startswith("promptdojo-course-")] == [
                f"promptdojo-course-{v2}"
            ]
        context.set_offline(True)
        page.reload()
        wait_ready(page)
        expect(page.locator("main h1")).to_have_text("Runaway cells, v2")
        expect(page.locator("#cell-state .cm-content")).to_have_text("a = 7")
    finally:
        context.close()


def test_a_new_version_waiting_for_the_old_worker_takes_over_once_it_is_idle(
    browser: Browser, numpy_release: object, tmp_path: Path
) -> None:
    """A new version's worker waits while the old one still answers a request (skipWaiting or
    not): the page sends the old one nothing meanwhile (a message that wakes it as the browser
    swaps it out can leave the new one waiting for minutes), and the new one, told to take over,
    caches its version once the request has ended.

    The new version is published only once the slow request is in flight: published before it,
    an update check the browser schedules by itself may install and activate it while the old
    worker is still idle, and there is then nothing to wait for."""
    lessons = copy_lessons(tmp_path / "lessons", ("runaway",))
    out = tmp_path / "site" / "course"
    args = (numpy_release.path, tmp_path / "no-cache")
    v1 = export(lessons, out, *args)
    context = browser.new_context()
    try:
        with holding_server(tmp_path / "site") as (url, hold):
            step = url + "/course/lessons/runaway/1/"
            page = open_page(context, step)
            assert wait_offline_ready(page) == v1
            source = lessons / "runaway" / "01-runaway.md"
            source.write_text(source.read_text().replace("Runaway cells", "Runaway cells, v2"))
            shutil.copytree(tmp_path / "site", tmp_path / "site-v2")
            v2 = export(lessons, tmp_path / "site-v2" / "course", *args)
            assert v2 != v1
            # As the page starts, it asks the host (through the old worker) for a slow answer;
            # the host serves the new version from then on.
            hold.path = "/course/slow"
            hold.then_serve = tmp_path / "site-v2"
            context.add_init_script(f"fetch({json.dumps(url + hold.path)}).catch(() => {{}})")
            page.goto(step)
            assert hold.arrived.wait(30)
            wait_ready(page)
            waiting = "navigator.serviceWorker.getRegistration().then((r) => Boolean(r.waiting))"
            deadline = time.monotonic() + 30
            while not page.evaluate(waiting) and time.monotonic() < deadline:
                page.wait_for_timeout(100)
            assert page.evaluate(waiting)  # installed, it waits for the old worker
            assert page.locator(".offline-status").get_attribute("data-version") is None
            hold.release()
            assert wait_offline_ready(page, v2) == v2
            names = page.evaluate("caches.keys()")
            assert [n for n in names if n.startswith("promptdojo-course-")] == [
                f"promptdojo-course-{v2}"
            ]
    finally:
        context.close()


def test_the_export_is_deterministic(numpy_release: object, tmp_path: Path) -> None:
    lessons = copy_lessons(tmp_path / "lessons")
    args = (numpy_release.path, tmp_path / "no-cache")
    first = export(lessons, tmp_path / "one", *args)
    time.sleep(1.1)  # a clock in any file would now differ
    second = export(lessons, tmp_path / "two", *args)
    assert first == second
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*"))
    assert files == sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*"))
    for path in files:
        if (tmp_path / "one" / path).is_file():
            assert (tmp_path / "one" / path).read_bytes() == (tmp_path / "two" / path).read_bytes()
