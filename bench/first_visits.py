"""Many first visits in one engine: how often the kernel worker has to be replaced, and what it
costs the learner.

    python bench/first_visits.py [--engine firefox] [--visits 50]

Each visit starts the engine afresh (a new profile) and opens step 1 of the real lesson, served
with Pyodide 0.29.0 and numpy (the tests' ``numpy_release``), until the page's ``pd:ready`` mark.
Firefox now and then leaves the worker the page's inline script starts without its requests or
its messages; the kernel client replaces a worker that says nothing (``kernel-client.js``,
``SILENT_AFTER_SCRIPT_MS``). The figures: visits that got ready, visits whose worker was replaced,
and the ready times (ms) of each kind.
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


def visit(name: str, url: str) -> tuple[float, bool]:
    """One fresh start of engine ``name`` on ``url``: ms to ``pd:ready``, and whether the
    client replaced the worker it began with."""
    engine = launch(name)
    try:
        open_ready(engine, url)
        ready = engine.evaluate("performance.getEntriesByName('pd:ready')[0].startTime")
        return ready, engine.evaluate("window.promptdojoKernel.startedEarly") is False
    finally:
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", default="firefox", choices=list(ENGINES))
    parser.add_argument("--visits", type=int, default=50)
    args = parser.parse_args()
    if missing(args.engine):
        sys.exit(missing(args.engine))
    release = build()
    plain: list[float] = []
    replaced: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(
            ROOT / "lessons", Path(tmp), "--pyodide-dir", str(release.path), "--offline"
        )
        try:
            url = f"{server.url}/lessons/{LESSON}/1"
            for _ in range(args.visits):
                ready, was_replaced = visit(args.engine, url)
                (replaced if was_replaced else plain).append(round(ready))
        finally:
            stop_server(server)
    figures = {
        "engine": args.engine,
        "visits": args.visits,
        "ready": len(plain) + len(replaced),
        "replaced": len(replaced),
        "ready_ms_median": statistics.median(plain) if plain else None,
        "ready_ms_max": max(plain) if plain else None,
        "replaced_ready_ms": replaced,
    }
    command = f"python bench/first_visits.py --engine {args.engine} --visits {args.visits}"
    save(f"first_visits_{args.engine}", figures, command)


if __name__ == "__main__":
    main()
