"""Cold kernel-ready from the static export over the same page from ``promptdojo serve``.

    python bench/export_boot.py [--runs 5]

The real lessons are exported (``promptdojo export``) with the Pyodide 0.29.0 release and its
official numpy (the tests' ``numpy_release``; the lesson needs numpy), and served side by side
with ``promptdojo serve`` of the same lessons and release. Every run opens lesson step 1 in a
fresh browser profile, in turn:

* from ``promptdojo serve`` (the baseline);
* from the export behind a static server that applies its ``_headers`` (as Netlify or
  Cloudflare Pages would): the page is isolated by the host's headers;
* from the export behind ``python -m http.server``, which sends no headers: the service worker
  supplies them, which costs one reload on a first visit.

Kernel-ready counts from the moment the page is asked for to the "ready" mark (across the
reload), so the three are comparable. Figures are medians; ratios are over serve's median. The
reload's own cost is measured too: how long after the request the page that boots Python begins
(its ``performance.timeOrigin``): the reloaded page behind ``http.server``, the first and only
page elsewhere.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import Error, sync_playwright

from bench._common import ROOT, save
from bench.browser import fresh_profile, mark
from tests.e2e.conftest import SNAPSHOTS, start_server, stop_server
from tests.support.static_host import headers_server, plain_server

LESSON = "/lessons/decoding-kv-cache-quantization/1"


def wait_ready_mark(page, timeout: float = 120.0) -> float:
    """The "ready" mark, waiting through the service worker's one reload."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = mark(page, "pd:ready")
        except Error:  # the page is reloading under the service worker
            value = None
        if value is not None:
            return value
        page.wait_for_timeout(20)
    raise TimeoutError(f"no pd:ready within {timeout} s")


def kernel_ready(playwright, tmp: str, url: str) -> tuple[float, float]:
    """Milliseconds from asking for ``url`` in a fresh profile to Python being ready, and to the
    start of the page that boots it (after the service worker's reload, where there is one)."""
    context = fresh_profile(playwright, tmp)
    try:
        page = context.pages[0] if context.pages else context.new_page()
        asked = time.time() * 1000
        page.goto(url)
        ready = wait_ready_mark(page)
        detail = page.evaluate(
            "window.promptdojoKernel.phases.filter(([p]) => p === 'ready').at(-1)[1]"
        )
        assert detail["restored"], detail
        assert detail["loaded"] == ["numpy"], detail
        assert page.evaluate("crossOriginIsolated"), url
        began = page.evaluate("performance.timeOrigin") - asked
        return began + ready, began
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from tests.support.numpy_release import build

    release = build()
    times: dict[str, list[float]] = {"serve": [], "export_headers": [], "export_http_server": []}
    began: dict[str, list[float]] = {name: [] for name in times}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        site = Path(tmp) / "site"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "promptdojo",
                "export",
                str(site),
                "--lessons-dir",
                str(ROOT / "lessons"),
                "--pyodide-dir",
                str(release.path),
                "--snapshot-cache",
                str(SNAPSHOTS),
            ],
            check=True,
        )
        server = start_server(
            ROOT / "lessons",
            Path(tmp),
            "--log-level",
            "warning",
            "--offline",
            "--pyodide-dir",
            str(release.path),
        )
        try:
            with headers_server(site, site / "_headers") as headers, plain_server(site) as plain:
                urls = {
                    "serve": server.url + LESSON,
                    "export_headers": headers + LESSON + "/",
                    "export_http_server": plain + LESSON + "/",
                }
                for _ in range(args.runs):
                    for name, url in urls.items():
                        ready, start = kernel_ready(playwright, tmp, url)
                        times[name].append(ready)
                        began[name].append(start)
        finally:
            stop_server(server)
    med = {name: statistics.median(values) for name, values in times.items()}
    figures = {
        "runs": args.runs,
        "serve_ms": round(med["serve"]),
        "export_headers_ms": round(med["export_headers"]),
        "export_http_server_ms": round(med["export_http_server"]),
        "export_ratio": round(med["export_headers"] / med["serve"], 3),
        "http_server_ratio": round(med["export_http_server"] / med["serve"], 3),
        "page_start_ms": {name: round(statistics.median(v)) for name, v in began.items()},
        "runs_ms": {name: [round(v) for v in values] for name, values in times.items()},
    }
    save("export_boot", figures, f"python bench/export_boot.py --runs {args.runs}")


if __name__ == "__main__":
    main()
