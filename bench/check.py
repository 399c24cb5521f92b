"""Cell-check figures: `promptdojo check` wall time against raw cell time, and scaling with -j.

    python bench/check.py           # the real lessons at -j 1, 2 and the CPU count
    python bench/check.py --cells   # one step of 2,000 cells against one of 10,000

Raw cell time is the sum of every cell's own execution time, from the check's JUnit report; the
wall time includes validation, one fresh process per step, imports and reporting. The second
run shows how a step's time grows with its cells (linear: 10,000 cells within 5 x 2,000).
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


#: Cells in the small and the large step of the scaling run.
CELL_COUNTS = (2_000, 10_000)


def many_cells(folder: Path, count: int) -> Path:
    """A lesson of one step with ``count`` small cells that each bind a name and print."""
    folder.mkdir(parents=True)
    (folder / "lesson.yaml").write_text(f'id: many-{count}\ntitle: Many\nchapter: "bench"\n')
    cells = "".join(f"```python\nx{i} = {i}\nprint(x{i})\n```\n\n" for i in range(count))
    (folder / "01-many.md").write_text(f"---\ntitle: Many\n---\n\n# Many\n\n{cells}")
    return folder


def check_seconds(lesson: Path) -> float:
    """Wall seconds of one `promptdojo check LESSON`."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", str(lesson)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "CI": "true"},
    )
    return time.perf_counter() - start


def cell_scaling() -> None:
    """How one step's check time grows with its cells."""
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for count in CELL_COUNTS:
            lesson = many_cells(Path(tmp) / f"many-{count}", count)
            seconds = min(check_seconds(lesson) for _ in range(3))
            figures[f"cells_{count}_s"] = round(seconds, 2)
            print(f"{count} cells: {seconds:.2f} s", flush=True)
    small, large = (figures[f"cells_{count}_s"] for count in CELL_COUNTS)
    figures["cells_ratio"] = round(large / small, 2)
    save("check_cells", figures, "python bench/check.py --cells")


def main() -> None:
    if "--cells" in sys.argv[1:]:
        cell_scaling()
        return
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
