"""Where kernel start-up time goes: the page's performance marks for a cold visit, the Next-step
navigation, and a warm visit, plus the bytes each response put on the wire.

    python bench/profile_boot.py

This is the profile behind the notes in BENCHMARKS.md; it prints, it does not judge.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from bench._common import ROOT, decoded_size, save
from bench.browser import LESSON, wait_mark
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, start_server, stop_server

MARKS = "performance.getEntriesByType('mark').map(e => [e.name, Math.round(e.startTime)])"


def show(title: str, page, into: dict) -> None:
    wait_mark(page, "pd:ready")
    print(f"\n{title}")
    marks = page.evaluate(MARKS)
    for name, at in marks:
        print(f"  {at:6} ms  {name}")
    into[title] = dict(marks)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(ROOT / "lessons", Path(tmp), "--log-level", "warning")
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context()
                page = context.new_page()
                wire: list[tuple[str, int, str, str]] = []

                def on_finished(request) -> None:
                    # A preload and the worker's later request for the same URL share one
                    # download (the server sees one GET), so each URL counts once.
                    response = request.response()
                    if response is None or request.url in {w[3] for w in wire}:
                        return
                    wire.append(
                        (
                            request.url.rsplit("/", 1)[-1][:40],
                            int(response.headers.get("content-length", 0)),
                            response.headers.get("content-encoding", "-"),
                            request.url,
                        )
                    )

                context.on("requestfinished", on_finished)
                scenarios: dict[str, dict] = {}
                page.goto(server.url + LESSON)
                show("cold", page, scenarios)
                page.wait_for_timeout(300)
                first_visit = list(wire)  # later visits come from the HTTP cache
                print("\n  bytes on the wire, first visit:")
                for name, size, encoding, _ in sorted(first_visit, key=lambda w: -w[1]):
                    print(f"  {size:>10,}  {encoding:4}  {name}")
                # "Next step" swaps the step in place (no new boot): bench/browser.py times it.
                page.goto(server.url + LESSON)
                show("warm", page, scenarios)
                browser.close()
            # Decoded sizes while the server still runs: each compressed response fetched again
            # uncompressed.
            decoded = {
                name: decoded_size(url) if encoding != "-" else size
                for name, size, encoding, url in first_visit
            }
        finally:
            stop_server(server)
    save(
        "profile",
        {
            "marks": scenarios,
            "wire": [
                {"file": n, "bytes": b, "encoding": e, "decoded": decoded[n]}
                for n, b, e, _ in sorted(first_visit, key=lambda w: -w[1])
            ],
        },
        "python bench/profile_boot.py",
    )


if __name__ == "__main__":
    main()
