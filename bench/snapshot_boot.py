"""Kernel-ready with and without the memory snapshot, against a bare Pyodide page, in one run.

    python bench/snapshot_boot.py [--runs 5]

For each Pyodide the server can serve (the built-in 314.0.7 core, without numpy; the 0.29.0
release with its official numpy, from the tests' ``numpy_release``), every run opens, each in a
fresh browser profile, on servers started side by side:

* a bare page whose worker only calls ``loadPyodide`` on the same core (no numpy);
* lesson step 1, restoring the snapshot, until "ready" (numpy loaded where there is numpy);
* the same step from a ``--no-snapshot`` server (the cold boot: the "before");
* the snapshot page again in the same profile (the second visit): once the first visit has
  finished its work, which ends when its offline copy of the course is written ("Available
  offline"), as when a learner comes back;
* and, in another fresh profile, the step and at once the step again, while the first visit's
  offline copy is still being written (the two compete for the two cores): the "revisit now".

Figures are medians; ratios are over the bare page's median in the same run ("restored" counts
the first visits of both profiles). The snapshot's size on the wire is the ``content-length`` of
its response.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import expect, sync_playwright

from bench._common import ROOT, save
from bench.browser import fresh_profile, serve_bare, wait_mark
from tests.e2e.conftest import start_server, stop_server

LESSON = "/lessons/decoding-kv-cache-quantization/1"


def open_page(playwright, tmp: str, url: str, bare_url: str | None = None):
    context = fresh_profile(playwright, tmp)
    if bare_url is not None:
        serve_bare(context, bare_url)
    page = context.pages[0] if context.pages else context.new_page()
    snapshot_bytes: list[int] = []
    context.on(
        "response",
        lambda r: (
            "/snapshot/" in r.url and snapshot_bytes.append(int(r.headers.get("content-length", 0)))
        ),
    )
    page.goto(url)
    return context, page, wait_mark(page, "pd:ready"), snapshot_bytes


def visit_twice(playwright, tmp: str, url: str, settle: bool) -> tuple[float, float, int]:
    """A first visit and a second one in the same profile; the second after the first visit's
    offline copy is written (``settle``) or at once. Returns both times and the wire bytes."""
    context, page, ready, sent = open_page(playwright, tmp, url)
    try:
        detail = page.evaluate(
            "window.promptdojoKernel.phases.filter(([p]) => p === 'ready').at(-1)[1]"
        )
        assert detail["restored"], detail
        if settle:
            offline = page.locator(".offline-status")
            expect(offline).to_have_attribute("data-state", "ready", timeout=120_000)
        page.goto(url)
        return ready, wait_mark(page, "pd:ready"), max(sent, default=0)
    finally:
        context.close()


def measure(playwright, tmp: str, servers: dict, runs: int) -> dict[str, object]:
    snap, cold = servers["snapshot"], servers["cold"]
    bare, restored, cold_ready, second, now, wire = [], [], [], [], [], []
    for _ in range(runs):
        context, _, ready, _ = open_page(
            playwright, tmp, snap.url + "/_bench/bare.html", servers["pyodide_url"]
        )
        bare.append(ready)
        context.close()
        for settle, revisits in ((True, second), (False, now)):
            first, again, sent = visit_twice(playwright, tmp, snap.url + LESSON, settle)
            restored.append(first)
            revisits.append(again)
            wire.append(sent)
        context, _, ready, _ = open_page(playwright, tmp, cold.url + LESSON)
        cold_ready.append(ready)
        context.close()
    med = statistics.median
    return {
        "bare_ms": round(med(bare)),
        "snapshot_ms": round(med(restored)),
        "cold_ms": round(med(cold_ready)),
        "second_visit_ms": round(med(second)),
        "snapshot_ratio": round(med(restored) / med(bare), 3),
        "cold_ratio": round(med(cold_ready) / med(bare), 3),
        "second_visit_ratio": round(med(second) / med(bare), 3),
        "revisit_now_ms": round(med(now)),
        "revisit_now_ratio": round(med(now) / med(bare), 3),
        "snapshot_wire_bytes": round(med(wire)),
        "numpy": servers["numpy"],
        "runs_ms": {
            "bare": [round(v) for v in bare],
            "snapshot": [round(v) for v in restored],
            "cold": [round(v) for v in cold_ready],
            "second_visit": [round(v) for v in second],
            "revisit_now": [round(v) for v in now],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from tests.support.numpy_release import build

    release = build()
    version = next((ROOT / "static" / "build" / "pyodide").iterdir()).name
    # Figure keys name the setup (dots would split BENCHMARKS.md's dotted lookups).
    setups = {
        "core": (version, [], f"/assets/pyodide/{version}/", False),
        "numpy_release": (
            release.version,
            ["--pyodide-dir", str(release.path)],
            release.url,
            True,
        ),
    }
    figures: dict[str, object] = {"runs": args.runs}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        for name, (pyodide_version, extra, pyodide_url, numpy) in setups.items():
            quiet = ["--log-level", "warning", "--offline", *extra]
            servers = {
                "snapshot": start_server(ROOT / "lessons", Path(tmp), *quiet),
                "cold": start_server(ROOT / "lessons", Path(tmp), *quiet, "--no-snapshot"),
                "pyodide_url": pyodide_url,
                "numpy": numpy,
            }
            try:
                figures[name] = {
                    "pyodide": pyodide_version,
                    **measure(playwright, tmp, servers, args.runs),
                }
            finally:
                stop_server(servers["snapshot"])
                stop_server(servers["cold"])
    save("snapshot_boot", figures, f"python bench/snapshot_boot.py --runs {args.runs}")


if __name__ == "__main__":
    main()
