"""`promptdojo check --show` against `promptdojo check` on the first lesson (goal: at most 1.2x).

    python bench/check_show.py --runs 7

The two commands run in turn, so a busy machine slows both alike; the medians are compared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, save

LESSON = "lessons/decoding-kv-cache-quantization"


def once(*extra: str) -> float:
    """Wall seconds of one `promptdojo check LESSON [extra]`."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", LESSON, *extra],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "CI": "true"},
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    plain, shown = [], []
    for _ in range(runs):
        plain.append(once())
        shown.append(once("--show"))
    figures = {
        "runs": runs,
        "check_median_s": round(statistics.median(plain), 3),
        "check_show_median_s": round(statistics.median(shown), 3),
        "ratio": round(statistics.median(shown) / statistics.median(plain), 3),
    }
    save("check_show", figures, f"python bench/check_show.py --runs {runs}")
    print(figures)


if __name__ == "__main__":
    main()
