"""Kernel-ready and a step's switch per browser engine, side by side in one run.

    python bench/engines.py [--runs 3]

Chromium (Playwright), Firefox ESR (puppeteer-core over WebDriver BiDi) and WebKitGTK (Selenium,
under Xvfb), with and without shared memory: the drivers of the cross-engine walk
(tests/e2e/engines.py). Each run starts every engine afresh (a new profile: no HTTP cache, no
service worker) and opens step 1 of the real lesson, served with Pyodide 0.29.0 and numpy
(the tests' ``numpy_release``), restoring the memory snapshot, until the page's ``pd:ready``
mark. Then, after 3 s of reading (by then the worker's imports and warm-ups after ready are over
and do not compete for the machine), the page's Next-step link is clicked: the next step swaps in
place, and the figures are the ms from the click (``pd:nav-start``) until its cells can run
(``pd:step-runnable``) and until the frame after that has been drawn (an animation frame, then a
task). The engines take turns within each run, so a busy machine slows them alike. Figures are
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
from tests.e2e.engines import ENGINES, launch, missing, wait_for
from tests.e2e.test_engines import LESSON, open_ready
from tests.support.numpy_release import build

#: Marks ``x:shown`` once the frame after ``pd:step-runnable`` has been drawn, then clicks Next.
NEXT_STEP = """(() => {
  new PerformanceObserver((list) => {
    if (list.getEntries().some((entry) => entry.name === "pd:step-runnable")) {
      requestAnimationFrame(() => setTimeout(() => performance.mark("x:shown"), 0));
    }
  }).observe({ type: "mark" });
  document.querySelector("a[rel=next]").click();
  return true;
})()"""
SINCE_CLICK = """["pd:step-runnable", "x:shown"].map((name) =>
  performance.getEntriesByName(name)[0].startTime
    - performance.getEntriesByName("pd:nav-start")[0].startTime)"""


def visit(name: str, url: str) -> dict[str, float]:
    """One fresh start of engine ``name`` on ``url``: ms from navigation to ``pd:ready``, and
    from the Next-step click until the next step can run and until it has been drawn."""
    engine = launch(name)
    try:
        detail = open_ready(engine, url)
        if not detail.get("restored"):
            raise RuntimeError(f"{name}: the snapshot was not restored ({detail})")
        ready = engine.evaluate("performance.getEntriesByName('pd:ready')[0].startTime")
        engine.evaluate("new Promise((done) => setTimeout(() => done(true), 3000))")
        engine.evaluate(NEXT_STEP)
        wait_for(engine, "performance.getEntriesByName('x:shown').length > 0")
        runnable, shown = engine.evaluate(SINCE_CLICK)
        return {"ready": ready, "next_runnable": runnable, "next_shown": shown}
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
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
            for _ in range(args.runs):
                for name in names:
                    runs[name].append(visit(name, url))
        finally:
            stop_server(server)

    def of(figure: str) -> dict[str, list[float]]:
        return {name: [round(run[figure], 1) for run in done] for name, done in runs.items()}

    ready_runs = {name: [round(ms) for ms in times] for name, times in of("ready").items()}
    runnable, shown = of("next_runnable"), of("next_shown")
    medians = {name: statistics.median(times) for name, times in ready_runs.items()}
    base = medians.get("chromium")
    figures = {
        "ready_ms": medians,
        "ready_runs_ms": ready_runs,
        "next_step_runnable_ms": {n: statistics.median(t) for n, t in runnable.items()},
        "next_step_shown_ms": {n: statistics.median(t) for n, t in shown.items()},
        "next_step_runs_ms": {n: list(zip(runnable[n], shown[n], strict=True)) for n in shown},
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
