"""One first visit traced through the shaping proxy: where a boot's time goes on a real link.

    python bench/trace_boot.py [--hosts serve_release export_http_server] [--mbit 20]
                               [--latency 40] [--return-visit] [--trace-dir DIR]

For each host (as bench/shaped_link.py serves them: ``promptdojo serve --pyodide-dir`` with the
Pyodide 0.29.0 release and its numpy, and that release's export behind ``python -m http.server``),
lesson step 1 is opened once in a fresh Chromium profile through a fresh shaping proxy, with
Chromium's tracing on. It prints, in milliseconds from asking for the page:

* every request as it crossed the proxy: its connection, when it was sent, its first and last
  byte delivered, and its bytes on the wire;
* the page's boot phases (downloading, starting, python-ready, ready) and the performance marks
  of the page and its workers;
* CPU: how long each of the browser's threads ran tasks before the last byte and between the last
  byte and "ready" (the tail that overlaps no download), with the longest tasks of the tail.

``--return-visit`` traces a learner's return instead: the first visit untraced, until the course is
kept offline ("Available offline"), then the step again in the same profile. Each visit also says
how much WebAssembly the browser compiled: the functions compiled on their first call on the
worker's thread, the optimizing compiler's time on background threads, and whether compiled code
was read from, or written to, the cache entry of the core's wasm.

``--trace-dir`` keeps each host's Chromium trace (``<host>.json``, for chrome://tracing or
Perfetto). Times depend on the machine's load: read them as a picture, not as a benchmark.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import expect, sync_playwright

from bench._common import ROOT
from bench.browser import fresh_profile
from bench.shaped_link import LESSON, export_site, wait_ready
from tests.e2e.conftest import READY, start_server, stop_server
from tests.support.shaping_proxy import ShapingProxy
from tests.support.static_host import plain_server

CATEGORIES = [
    "toplevel",
    "devtools.timeline",
    "blink.user_timing",
    "v8",
    "v8.wasm",
    "disabled-by-default-devtools.timeline",
]
#: Task events whose duration is a thread's busy time (top-level tasks, not nested).
TASKS = {"ThreadControllerImpl::RunTask", "RunTask"}


def record_trace(cdp, page, run) -> list[dict]:
    """Chromium's trace events while ``run()`` runs, through the page's CDP session."""
    events: list[dict] = []
    done = []
    cdp.on("Tracing.dataCollected", lambda params: events.extend(params["value"]))
    cdp.on("Tracing.tracingComplete", lambda params: done.append(True))
    cdp.send(
        "Tracing.start",
        {"transferMode": "ReportEvents", "traceConfig": {"includedCategories": CATEGORIES}},
    )
    result = run()
    cdp.send("Tracing.end")
    deadline = time.monotonic() + 60
    while not done and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    return result, events


def thread_names(events: list[dict]) -> dict[tuple[int, int], str]:
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    return names


def clock_offset(events: list[dict], marks: dict[str, float]) -> float | None:
    """Seconds to add to a trace timestamp (µs / 1e6) to get ``time.time()``, from "pd:ready"."""
    for e in events:
        if e.get("name") == "pd:ready" and "blink.user_timing" in e.get("cat", ""):
            return marks["pd:ready"] - e["ts"] / 1e6
    return None


def busy(events, names, offset, start, split, end) -> list[tuple]:
    """Per thread: task time in [start, split] and in [split, end] (ms), and the tail's tasks."""
    rows: dict[tuple[int, int], list] = defaultdict(lambda: [0.0, 0.0, []])
    for e in events:
        if e.get("ph") != "X" or e.get("name") not in TASKS:
            continue
        begin = e["ts"] / 1e6 + offset
        finish = begin + e.get("dur", 0) / 1e6
        row = rows[(e["pid"], e["tid"])]
        before = max(0.0, min(finish, split) - max(begin, start))
        after = max(0.0, min(finish, end) - max(begin, split))
        row[0] += before * 1000
        row[1] += after * 1000
        if after > 0.005:
            row[2].append((begin, after * 1000))
    out = []
    for key, (before, after, tail) in rows.items():
        if before + after >= 20:
            out.append((key, names.get(key, f"{key}"), before, after, sorted(tail)))
    return sorted(out, key=lambda r: -(r[2] + r[3]))


def nested(events, offset, thread, begin, end) -> list[tuple[str, float]]:
    """The longest named events (not tasks) on ``thread`` (pid, tid) within [begin, end]."""
    found: dict[str, float] = defaultdict(float)
    for e in events:
        if e.get("ph") != "X" or e.get("name") in TASKS:
            continue
        if (e["pid"], e["tid"]) != thread:
            continue
        at = e["ts"] / 1e6 + offset
        if begin <= at <= end:
            found[e["name"]] += e.get("dur", 0) / 1000
    return sorted(found.items(), key=lambda kv: -kv[1])[:12]


def visit(
    playwright, tmp: str, target: str, path: str, mbit: float, latency: float, again: bool
) -> dict:
    with ShapingProxy(target, rate_mbit=mbit, latency_ms=latency) as proxy:
        context = fresh_profile(playwright, tmp)
        try:
            page = context.pages[0] if context.pages else context.new_page()
            cdp = context.new_cdp_session(page)
            if again:  # the first visit, untraced, until the course is kept offline
                page.goto(proxy.url + path, wait_until="commit")
                wait_ready(page)
                offline = page.locator(".offline-status")
                expect(offline).to_have_attribute("data-state", "ready", timeout=120_000)
                page.goto("about:blank")

            def run() -> dict:
                asked = time.time()
                page.goto(proxy.url + path, wait_until="commit")
                ready = wait_ready(page) / 1000
                page.wait_for_timeout(300)
                origin = page.evaluate("performance.timeOrigin") / 1000
                marks = page.evaluate(
                    "Object.fromEntries(performance.getEntriesByType('mark')"
                    ".map(e => [e.name, e.startTime]))"
                )
                phases = page.evaluate(
                    "window.promptdojoKernel.phases.map(([p], i) =>"
                    " [p, window.promptdojoKernel.phaseTimes[i]])"
                )
                return {
                    "asked": asked,
                    "ready": ready,
                    "origin": origin,
                    "marks": {k: origin + v / 1000 for k, v in marks.items()},
                    "phases": [(p, origin + t / 1000) for p, t in phases],
                    "detail": page.evaluate(READY),
                }

            result, events = record_trace(cdp, page, run)
            result["exchanges"] = [e for e in proxy.exchanges() if e.started >= result["asked"]]
            result["events"] = events
            return result
        finally:
            context.close()


def wasm_compiling(events: list[dict]) -> str:
    """What the browser compiled of WebAssembly in the trace, in one line."""
    lazy = [e.get("dur", 0) for e in events if e.get("name") == "wasm.CompileLazy"]
    top = sum(e.get("dur", 0) for e in events if e.get("name") == "wasm.TopTierCompilation")
    names = {e.get("name") for e in events}
    read = "v8.wasm.compileDigestForConsume" in names  # the cache entry's code, checked and used
    written = "v8.wasm.cachedModule" in names
    return (
        f"WebAssembly: {len(lazy)} functions compiled on first call ({sum(lazy) / 1000:.0f} ms),"
        f" {top / 1000:.0f} ms optimizing in the background; compiled code"
        f" {'read from' if read else 'not read from'} the cache,"
        f" {'written to it' if written else 'not written'}"
    )


def report(name: str, visit: dict) -> None:
    asked, ready = visit["asked"], visit["ready"]
    ms = lambda t: (t - asked) * 1000 if t else float("nan")  # noqa: E731
    exchanges = [e for e in visit["exchanges"] if e.started <= ready]
    # The last byte of the boot's files (a service worker's update check, a few bytes, is not).
    big = [(e.finished or e.started) for e in exchanges if e.wire_bytes > 20_000]
    last_byte = max(big, default=asked)  # a return visit may download nothing big
    total = sum(e.bytes_before(ready) for e in exchanges)
    print(f"\n== {name}: ready {ms(ready):.0f} ms, {total:,} B before ready")
    print(
        f"   last byte before ready at {ms(last_byte):.0f} ms; tail {ms(ready) - ms(last_byte):.0f}"
    )
    print(f"   {'conn':>4} {'sent':>6} {'first':>6} {'last':>6} {'bytes':>10}  path")
    for e in sorted(exchanges, key=lambda e: e.started):
        first = e.delivered[0][0] if e.delivered else None
        print(
            f"   {e.connection:>4} {ms(e.started):>6.0f} {ms(first):>6.0f} {ms(e.finished):>6.0f}"
            f" {e.bytes_before(ready):>10,}  {e.path}"
        )
    print(f"   ready detail: {json.dumps(visit['detail'])}")
    print("   phases: " + ", ".join(f"{p} {ms(t):.0f}" for p, t in visit["phases"]))
    print(
        "   marks: "
        + ", ".join(
            f"{k} {ms(t):.0f}" for k, t in sorted(visit["marks"].items(), key=lambda kv: kv[1])
        )
    )
    events = visit["events"]
    print("   " + wasm_compiling(events))
    offset = clock_offset(events, visit["marks"])
    if offset is None:
        print("   (no trace clock: pd:ready not in the trace)")
        return
    names = thread_names(events)
    worker_marks = [
        (e["name"], e["ts"] / 1e6 + offset)
        for e in events
        if "blink.user_timing" in e.get("cat", "")
        and e["name"].startswith("pd:worker")
        and e.get("ph") in ("R", "I", "n", "b")
    ]
    if worker_marks:
        marks = sorted(worker_marks, key=lambda m: m[1])
        print("   worker marks: " + ", ".join(f"{n} {ms(t):.0f}" for n, t in marks))
    print(f"   {'thread':<40} {'busy before last byte':>22} {'busy in tail':>13}")
    rows = busy(events, names, offset, asked, last_byte, ready)
    for _, thread, before, after, tail in rows:
        print(f"   {thread[:40]:<40} {before:>22.0f} {after:>13.0f}")
        for begin, length in tail[:8]:
            if length >= 30:
                print(f"   {'':<8} tail task at {ms(begin):.0f}: {length:.0f} ms")
    for key, thread, _, after, _ in rows[:3]:
        top = nested(events, offset, key, last_byte, ready)
        if top and after >= 20:
            print(f"   {thread} {key} in the tail: " + ", ".join(f"{n} {d:.0f}" for n, d in top))
    for key, thread, _, _, _ in sorted(rows, key=lambda r: -r[2])[:3]:
        top = nested(events, offset, key, asked, last_byte)
        if top:
            print(f"   {thread} {key} before: " + ", ".join(f"{n} {d:.0f}" for n, d in top))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", nargs="+", default=["serve_release", "export_http_server"])
    parser.add_argument("--mbit", type=float, default=20.0)
    parser.add_argument("--latency", type=float, default=40.0)
    parser.add_argument("--return-visit", action="store_true")
    parser.add_argument("--trace-dir", type=Path)
    args = parser.parse_args()
    from tests.support.numpy_release import build

    release = build()
    quiet = ["--log-level", "warning", "--offline"]
    with (
        tempfile.TemporaryDirectory() as name,
        sync_playwright() as playwright,
        ExitStack() as stack,
    ):
        tmp = Path(name)
        targets = {}
        if "serve_release" in args.hosts:
            server = start_server(ROOT / "lessons", tmp, *quiet, "--pyodide-dir", str(release.path))
            stack.callback(stop_server, server)
            targets["serve_release"] = (server.url, LESSON)
        if "export_http_server" in args.hosts:
            site = export_site(tmp, release)
            targets["export_http_server"] = (stack.enter_context(plain_server(site)), LESSON + "/")
        for host, (target, path) in targets.items():
            one = visit(playwright, name, target, path, args.mbit, args.latency, args.return_visit)
            report(f"{host}, return visit" if args.return_visit else host, one)
            if args.trace_dir:
                args.trace_dir.mkdir(parents=True, exist_ok=True)
                (args.trace_dir / f"{host}.json").write_text(json.dumps(one["events"]))


if __name__ == "__main__":
    main()
