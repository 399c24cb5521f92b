"""A learner's first visit over a real link: bytes before "ready", ready time, and the link's limit.

    python bench/shaped_link.py [--runs 3]

Every byte between Chromium and the host goes through a shaping proxy on loopback
(tests/support/shaping_proxy.py): one downstream link shared by all connections, plus a round
trip per new connection and per response. Lesson step 1 (the numpy lesson) is opened in a fresh
browser profile, per run, from three hosts:

* ``serve_core``: ``promptdojo serve`` with its built-in Pyodide core. That core has no numpy: the
  page becomes ready with numpy reported missing (its figures are the core's alone);
* ``serve_release``: ``promptdojo serve --pyodide-dir`` with Pyodide 0.29.0 and its numpy;
* ``export_http_server``: ``promptdojo export`` with the same release, behind
  ``python -m http.server`` (one reload under the service worker on a first visit).

For each: the bytes delivered before the page's ``pd:ready`` mark (heads and bodies, as sent:
exact), the time from asking for the page to "ready" at 20 Mbit/s with 40 ms and at 5 Mbit/s with
100 ms (medians), the limit (those bytes ÷ the link's rate) and ready ÷ limit; the boot's files
with their bytes on the wire; and, on the first run, every request of the whole first visit up to
the offline copy being written, per URL, to catch a file fetched twice. Last, 30 learners open the
step at once through one 100 Mbit/s link as plain HTTP clients replaying a browser's requests
before "ready" (bench/_crowd.py): the time until the last has everything, against their bytes ÷
the link.

Bytes are exact; times depend on the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import Error, expect, sync_playwright

from bench._common import ROOT, save
from bench._crowd import Request, crowd
from bench.browser import fresh_profile, mark
from tests.e2e.conftest import READY, SNAPSHOTS, start_server, stop_server
from tests.support.shaping_proxy import ShapingProxy
from tests.support.static_host import plain_server

LESSON = "/lessons/decoding-kv-cache-quantization/1"
#: (figure key, downstream Mbit/s, added latency in ms)
LINKS = [("link_20", 20.0, 40.0), ("link_5", 5.0, 100.0)]
#: The goal's edge: ready ≤ EDGE_FACTOR × (bytes ÷ link) + EDGE_S.
EDGE_FACTOR, EDGE_S = 1.15, 0.5


def wait_ready(page, timeout: float = 600.0) -> float:
    """The "ready" mark as ``time.time()`` milliseconds, waiting through a reload."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = mark(page, "pd:ready")
            if value is not None:
                return page.evaluate("performance.timeOrigin") + value
        except Error:  # the page is reloading under the service worker
            pass
        time.sleep(0.02)
    raise TimeoutError(f"no pd:ready within {timeout} s")


def visit(playwright, tmp: str, target: str, path: str, link: tuple, whole: bool) -> dict:
    """One first visit to ``path`` in a fresh profile, through a fresh proxy to ``target``."""
    _, rate, latency = link
    with ShapingProxy(target, rate_mbit=rate, latency_ms=latency) as proxy:
        context = fresh_profile(playwright, tmp)
        try:
            page = context.pages[0] if context.pages else context.new_page()
            asked = time.time() * 1000
            page.goto(proxy.url + path, wait_until="commit")
            ready_at = wait_ready(page)
            detail = page.evaluate(READY)
            cutoff = ready_at / 1000
            log = proxy.exchanges()
            before = [e for e in log if e.started <= cutoff]
            result = {
                "ready_ms": ready_at - asked,
                "bytes": sum(e.bytes_before(cutoff) for e in log),
                "detail": detail,
                "requests": [Request(e.method, e.path, e.request_headers) for e in before],
                "files": [
                    {
                        "path": e.path,
                        "status": e.status,
                        "encoding": e.content_encoding or "-",
                        "wire": e.bytes_before(cutoff),
                        "complete": bool(e.finished and e.finished <= cutoff),
                    }
                    for e in before
                ],
            }
            if whole:
                offline = page.locator(".offline-status")
                expect(offline).to_have_attribute("data-state", "ready", timeout=600_000)
                page.wait_for_timeout(1000)
                rows: dict[str, dict] = {}
                for e in proxy.exchanges():
                    row = rows.setdefault(e.path, {"path": e.path, "requests": 0, "wire": 0})
                    row["requests"] += 1
                    row["wire"] += sum(n for _, n in e.delivered)
                    row.setdefault("statuses", []).append(e.status)
                result["whole_visit"] = sorted(rows.values(), key=lambda r: r["path"])
            return result
        finally:
            context.close()


def per_file(files: list[dict]) -> list[dict]:
    """The boot's files, one row per path: requests, bytes on the wire, encoding."""
    rows: dict[str, dict] = {}
    for f in files:
        row = rows.setdefault(
            f["path"], {"path": f["path"], "requests": 0, "wire": 0, "encoding": f["encoding"]}
        )
        row["requests"] += 1
        row["wire"] += f["wire"]
    return sorted(rows.values(), key=lambda r: -r["wire"])


def summarise(name: str, visits: dict[str, list[dict]]) -> dict:
    med = statistics.median
    first = visits[LINKS[0][0]][0]
    numbers = [v["bytes"] for runs in visits.values() for v in runs]
    figures: dict[str, object] = {
        "bytes_before_ready": round(med(numbers)),
        "bytes_runs": numbers,
        "numpy_loaded": "numpy" in (first["detail"].get("loaded") or []),
        "ready_detail": first["detail"],
        "files": per_file(first["files"]),
        "whole_visit": first.get("whole_visit", []),
        "fetched_twice": [r["path"] for r in first.get("whole_visit", []) if r["requests"] > 1],
        "whole_visit_bytes": sum(r["wire"] for r in first.get("whole_visit", [])),
    }
    for key, rate, _ in LINKS:
        runs = visits[key]
        ready_s = med(v["ready_ms"] for v in runs) / 1000
        limit_s = med(v["bytes"] for v in runs) * 8 / (rate * 1e6)
        figures[key] = {
            "ready_ms": round(ready_s * 1000),
            "ready_runs_ms": [round(v["ready_ms"]) for v in runs],
            "limit_ms": round(limit_s * 1000),
            "ratio": round(ready_s / limit_s, 3),
            "edge_ms": round((EDGE_FACTOR * limit_s + EDGE_S) * 1000),
            "over_edge": round(ready_s / (EDGE_FACTOR * limit_s + EDGE_S), 3),
            # Visits whose downloads were done in the kernel worker (a download worker silent
            # for its whole patience, or one that could not start): on a slow link, a sign that
            # the patience is too short.
            "downloads_in_kernel_worker": sum(
                v["detail"].get("downloadedIn") == "kernel worker" for v in runs
            ),
        }
    print(f"{name}: {figures['bytes_before_ready']:,} B before ready", file=sys.stderr)
    return figures


def export_site(tmp: Path, release) -> Path:
    site = tmp / "site"
    command = [sys.executable, "-m", "promptdojo", "export", str(site)]
    command += ["--lessons-dir", str(ROOT / "lessons"), "--pyodide-dir", str(release.path)]
    subprocess.run([*command, "--snapshot-cache", str(SNAPSHOTS)], check=True)
    return site


def ratios(figures: dict) -> None:
    """The export behind http.server over serve --pyodide-dir, and the most bytes of a path."""
    serve, export = figures["serve_release"], figures["export_http_server"]
    figures["export_over_serve"] = {
        "bytes": round(export["bytes_before_ready"] / serve["bytes_before_ready"], 3),
        "ready_link_20": round(export["link_20"]["ready_ms"] / serve["link_20"]["ready_ms"], 3),
        "ready_link_5": round(export["link_5"]["ready_ms"] / serve["link_5"]["ready_ms"], 3),
    }
    figures["max_bytes_before_ready"] = max(
        figures[n]["bytes_before_ready"]
        for n in ("serve_core", "serve_release", "export_http_server")
    )


@contextmanager
def keep_alive_server(root: Path) -> Iterator[str]:
    """A static server of ``root`` with HTTP/1.1 keep-alive and a deep listen backlog."""
    handler = type(
        "Handler",
        (SimpleHTTPRequestHandler,),
        {"protocol_version": "HTTP/1.1", "log_message": lambda *args: None},
    )
    server_class = type("Server", (ThreadingHTTPServer,), {"request_queue_size": 1024})
    httpd = server_class(("127.0.0.1", 0), partial(handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=30)
    args = parser.parse_args()
    command = f"python bench/shaped_link.py --runs {args.runs}"
    from tests.support.numpy_release import build

    release = build()
    quiet = ["--log-level", "warning", "--offline"]
    figures: dict[str, object] = {"runs": args.runs, "lesson": LESSON}
    figures["links"] = {key: {"mbit": rate, "latency_ms": ms} for key, rate, ms in LINKS}
    with (
        tempfile.TemporaryDirectory() as name,
        sync_playwright() as playwright,
        ExitStack() as stack,
    ):
        tmp = Path(name)
        site = export_site(tmp, release)
        core = start_server(ROOT / "lessons", tmp, *quiet)
        stack.callback(stop_server, core)
        numpy = start_server(ROOT / "lessons", tmp, *quiet, "--pyodide-dir", str(release.path))
        stack.callback(stop_server, numpy)
        # The export's pages are folders (index.html inside): the step ends in "/".
        targets = {
            "serve_core": (core.url, LESSON),
            "serve_release": (numpy.url, LESSON),
            "export_http_server": (stack.enter_context(plain_server(site)), LESSON + "/"),
        }
        visits = {n: defaultdict(list) for n in targets}
        for run in range(args.runs):
            for link in LINKS:
                for n, (target, path) in targets.items():
                    whole = run == 0 and link == LINKS[0]
                    one = visit(playwright, name, target, path, link, whole)
                    visits[n][link[0]].append(one)
                    print(
                        f"run {run + 1} {link[0]} {n}: {one['bytes']:,} B, "
                        f"ready {one['ready_ms'] / 1000:.1f} s",
                        file=sys.stderr,
                    )
        for n in targets:
            figures[n] = summarise(n, visits[n])
        ratios(figures)
        save("shaped_link", figures, command)  # kept should the crowd below fail
        # The same export behind a host that takes many connections at once (a listen backlog
        # of 1024, HTTP/1.1 keep-alive), beside http.server's backlog of 5 and HTTP/1.0.
        site_url = stack.enter_context(keep_alive_server(site))
        targets["export_keep_alive"] = (site_url, "")
        visits["export_keep_alive"] = visits["export_http_server"]
        crowds: dict[str, object] = {"rate_mbit": 100.0, "latency_ms": 40.0}
        for n, (target, _) in targets.items():
            requests = visits[n][LINKS[0][0]][0]["requests"]
            crowds[n] = crowd(target, requests, clients=args.clients)
            print(f"{n}: {args.clients} clients {crowds[n]}", file=sys.stderr)
        figures["crowd"] = crowds
    save("shaped_link", figures, command)


if __name__ == "__main__":
    main()
