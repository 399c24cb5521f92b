"""Kernel-ready per browser engine, side by side in one run.

    python bench/engines.py [--runs 3]

Chromium (Playwright), Firefox ESR (puppeteer-core over WebDriver BiDi) and WebKitGTK (Selenium,
under Xvfb), with and without shared memory: the drivers of the cross-engine walk
(tests/e2e/engines.py). Each run starts every engine afresh (a new profile: no HTTP cache, no
service worker) and opens step 1 of the real lesson, served with Pyodide 0.29.0 and numpy
(the tests' ``numpy_release``), restoring the memory snapshot, until the page's ``pd:ready``
mark. The engines take turns within each run, so a busy machine slows them alike. Figures are
medians in ms; ratios are over Chromium's median in the same run. An engine missing here is
left out and named.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, save
from tests.e2e.conftest import start_server, stop_server
from tests.e2e.engines import ENGINES, launch, missing
from tests.e2e.test_engines import LESSON, open_ready
from tests.support.numpy_release import build


def ready_ms(name: str, url: str) -> float:
    """One fresh start of engine ``name``: ms from navigation to ``pd:ready`` on ``url``."""
    engine = launch(name)
    try:
        detail = open_ready(engine, url)
        if not detail.get("restored"):
            raise RuntimeError(f"{name}: the snapshot was not restored ({detail})")
        return engine.evaluate("performance.getEntriesByName('pd:ready')[0].startTime")
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    names = [name for name in ENGINES if not missing(name)]
    left_out = {name: missing(name) for name in ENGINES if missing(name)}
    release = build()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            ROOT / "lessons", Path(tmp), "--pyodide-dir", str(release.path), "--offline"
        )
        try:
            url = f"{server.url}/lessons/{LESSON}/1"
            runs: dict[str, list[float]] = {name: [] for name in names}
            for _ in range(args.runs):
                for name in names:
                    runs[name].append(round(ready_ms(name, url)))
        finally:
            stop_server(server)
    medians = {name: statistics.median(times) for name, times in runs.items()}
    base = medians.get("chromium")
    figures = {
        "ready_ms": medians,
        "ready_runs_ms": runs,
        "left_out": left_out,
        "runs": args.runs,
    }
    if base:
        for name, median in medians.items():
            if name != "chromium":
                figures[f"{name.replace('-', '_')}_ratio"] = round(median / base, 2)
    save("engines", figures, f"python bench/engines.py --runs {args.runs}")


if __name__ == "__main__":
    main()
