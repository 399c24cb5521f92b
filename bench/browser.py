"""Browser figures in headless Chromium against the real server, as ratios within one run.

    python bench/browser.py [--runs 5]

* kernel-ready on a lesson step / kernel-ready on a bare page that only boots the same
  self-hosted Pyodide core (median of cold runs, each in a fresh browser profile);
* next step: from the Next-step click until the next page's cells can run / cold kernel-ready;
* warm visit: kernel-ready on a second visit with the HTTP cache / the first visit;
* wire bytes: bytes on the wire on a first visit / the same responses' decoded size;
* round trip: the first cell's Run until its output, in ms;
* stop latency: Stop on a `while True: pass` cell until the cell reports it stopped, in ms.

The page records performance marks (pd:boot-start, pd:python-ready, pd:numpy-ready when numpy
loads, pd:ready, pd:first-output); the figures read them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from bench._common import ROOT, decoded_size, save
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server

LESSON = "/lessons/decoding-kv-cache-quantization/1"
FIXTURE = "/lessons/hello/1"

BARE_HTML = """<!doctype html><meta charset="utf-8"><title>bare</title>
<script type="module" src="/_bench/bare.js"></script>"""
BARE_JS = """performance.mark("pd:boot-start");
const worker = new Worker("/_bench/bare-worker.js", { type: "module" });
worker.onmessage = () => performance.mark("pd:ready");"""
BARE_WORKER = """const base = "%s";
const { loadPyodide } = await import(base + "pyodide.mjs");
await loadPyodide({ indexURL: base });
self.postMessage("ready");"""
ISOLATION = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
}


def mark(page, name: str) -> float | None:
    entries = page.evaluate(f"performance.getEntriesByName({name!r}).map(e => e.startTime)")
    return entries[0] if entries else None


def wait_mark(page, name: str, timeout: float = 120.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = mark(page, name)
        if value is not None:
            return value
        page.wait_for_timeout(20)
    raise TimeoutError(f"no {name} within {timeout} s")


def fresh_profile(playwright, base: str):
    """A new Chromium with a new, empty profile directory under ``base``."""
    profile = tempfile.mkdtemp(prefix="profile-", dir=base)
    return playwright.chromium.launch_persistent_context(
        profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
    )


def serve_bare(context, pyodide_url: str) -> None:
    """Answer /_bench/bare*.html|js in ``context``: a page whose worker only boots the core."""

    def fulfil(body: str, kind: str):
        return lambda route: route.fulfill(
            status=200, body=body, content_type=kind, headers=ISOLATION
        )

    context.route("**/_bench/bare.html", fulfil(BARE_HTML, "text/html"))
    context.route("**/_bench/bare.js", fulfil(BARE_JS, "text/javascript"))
    context.route("**/_bench/bare-worker.js", fulfil(BARE_WORKER % pyodide_url, "text/javascript"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    version = next((ROOT / "static" / "build" / "pyodide").iterdir()).name
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(ROOT / "lessons", Path(tmp), "--log-level", "warning")
        fixtures = start_server(
            ROOT / "tests" / "fixtures" / "lessons", Path(tmp), "--log-level", "warning"
        )
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                step_ready, bare_ready, python_ready, next_ratio = [], [], [], []
                warm_ratio, wire, round_trip, stop_latency = [], [], [], []
                next_ms, warm_ms = [], []
                for _ in range(args.runs):
                    # Bare page: only the Pyodide core, same server, same files.
                    context = fresh_profile(playwright, tmp)
                    serve_bare(context, f"/assets/pyodide/{version}/")
                    page = context.pages[0] if context.pages else context.new_page()
                    page.goto(server.url + "/_bench/bare.html")
                    bare_ready.append(wait_mark(page, "pd:ready"))
                    context.close()

                    # Lesson step, cold: a fresh browser profile, empty HTTP and code caches.
                    context = fresh_profile(playwright, tmp)
                    page = context.pages[0] if context.pages else context.new_page()
                    sizes = {"encoded": 0, "decoded": 0, "seen": set()}

                    def on_finished(request, sizes=sizes):
                        # Wire size from Content-Length (what the server sent, compressed or
                        # not); decoded size from the same URL fetched again uncompressed.
                        # A preload and the worker's later request for the same URL share one
                        # download (the server sees one GET), so each URL counts once.
                        response = request.response()
                        if response is None or response.status != 200:
                            return
                        if request.url in sizes["seen"]:
                            return
                        sizes["seen"].add(request.url)
                        headers = response.headers
                        sent = int(headers.get("content-length", 0))
                        decoded = sent
                        if headers.get("content-encoding"):
                            decoded = decoded_size(request.url)
                        sizes["encoded"] += sent
                        sizes["decoded"] += decoded

                    context.on("requestfinished", on_finished)
                    page.goto(server.url + LESSON)
                    cold = wait_mark(page, "pd:ready")
                    step_ready.append(cold)
                    python_ready.append(wait_mark(page, "pd:python-ready"))
                    page.wait_for_timeout(300)
                    wire.append(sizes["encoded"] / max(sizes["decoded"], 1))
                    context.remove_listener("requestfinished", on_finished)

                    # Next step: from the click (the page's own mark) until the next step's
                    # cells can run. The step swaps in place; the worker keeps running.
                    page.get_by_role("link", name="Next step").click()
                    runnable = wait_mark(page, "pd:step-runnable") - wait_mark(page, "pd:nav-start")
                    page.locator(".cell button.run:not([disabled])").first.wait_for()
                    next_ms.append(runnable)
                    next_ratio.append(runnable / cold)

                    # Warm visit: the first step again, HTTP cache populated.
                    page.goto(server.url + LESSON)
                    warm = wait_mark(page, "pd:ready")
                    warm_ms.append(warm)
                    warm_ratio.append(warm / cold)
                    context.close()

                    # Round trip of a first run, on a plain-Python cell.
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(fixtures.url + FIXTURE)
                    wait_mark(page, "pd:ready")
                    page.locator(".cell").nth(0).get_by_role(
                        "button", name="Run", exact=True
                    ).click()
                    out = wait_mark(page, "pd:first-output")
                    round_trip.append(out - wait_mark(page, "pd:run-start"))

                    # Stop: an endless loop, interrupted through the SharedArrayBuffer.
                    page.goto(fixtures.url + "/lessons/runaway/1")
                    wait_mark(page, "pd:ready")
                    spin = page.locator("#cell-spin")
                    spin.get_by_role("button", name="Run", exact=True).click()
                    page.wait_for_timeout(300)
                    spin.get_by_role("button", name="Stop").click()
                    stop_latency.append(wait_mark(page, "pd:stopped") - wait_mark(page, "pd:stop"))
                    context.close()
                browser.close()
        finally:
            stop_server(server)
            stop_server(fixtures)

    med = statistics.median
    figures = {
        "runs": args.runs,
        "kernel_ready_step_ms": round(med(step_ready)),
        "kernel_ready_bare_ms": round(med(bare_ready)),
        "kernel_ready_ratio": round(med(step_ready) / med(bare_ready), 3),
        "kernel_ready_step_runs_ms": [round(v) for v in step_ready],
        "kernel_ready_bare_runs_ms": [round(v) for v in bare_ready],
        "python_ready_step_ms": round(med(python_ready)),
        "next_step_ratio": round(med(next_ratio), 4),
        "next_step_ms": round(med(next_ms), 1),
        "warm_visit_ratio": round(med(warm_ratio), 3),
        "warm_visit_ms": round(med(warm_ms)),
        "wire_bytes_ratio": round(med(wire), 3),
        "round_trip_ms": round(med(round_trip), 1),
        "stop_latency_ms": round(med(stop_latency), 1),
        "stop_latency_runs_ms": [round(v, 1) for v in stop_latency],
        "numpy_in_cache": False,
    }
    save("browser", figures, "python bench/browser.py --runs 5")


if __name__ == "__main__":
    main()
