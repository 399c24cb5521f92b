"""Cell-check figures: `promptdojo check` wall time against raw cell time, and scaling with -j.

    python bench/check.py

Raw cell time is the sum of every cell's own execution time, from the check's JUnit report; the
wall time includes validation, one fresh process per step, imports and reporting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, save


def run(jobs: int) -> tuple[float, float]:
    """(wall seconds, summed cell seconds) of one `promptdojo check lessons -j N`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "promptdojo",
                "check",
                "lessons",
                "-j",
                str(jobs),
                "--junit-xml",
                str(report),
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
            env={**os.environ, "CI": "true"},
        )
        wall = time.perf_counter() - start
        cells = sum(float(c.get("time", 0)) for c in ET.parse(report).getroot().iter("testcase"))
    return wall, cells


def main() -> None:
    figures: dict[str, object] = {}
    cpus = os.cpu_count() or 1
    for jobs in sorted({1, 2, cpus}):
        runs = [run(jobs) for _ in range(3)]
        wall = min(r[0] for r in runs)
        cells = min(r[1] for r in runs)
        figures[f"wall_s_j{jobs}"] = round(wall, 2)
        figures[f"cell_s_j{jobs}"] = round(cells, 2)
        figures[f"overhead_ratio_j{jobs}"] = round(wall / cells, 2)
        print(f"-j {jobs}: wall {wall:.2f} s, cells {cells:.2f} s", flush=True)
    figures["speedup_j2_vs_j1"] = round(figures["wall_s_j1"] / figures["wall_s_j2"], 2)
    save("check", figures, "python bench/check.py")


if __name__ == "__main__":
    main()
