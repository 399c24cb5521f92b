"""Shared helpers for the benchmarks: machine facts and result files."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def machine() -> dict[str, object]:
    """Cores, memory and versions of the machine the figures come from."""
    memory = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = int(line.split()[1]) * 1024
    except OSError:
        pass
    import numpy

    return {
        "cores": os.cpu_count(),
        "memory_gib": round(memory / 1024**3, 1),
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        # The machine is shared: its load (1, 5, 15 minutes) when the figures were saved.
        "load_average": [round(v, 1) for v in os.getloadavg()],
        "python_loop_ms": python_loop_ms(),
    }


def python_loop_ms() -> float:
    """Milliseconds this machine takes for a fixed loop of pure Python (best of 3): the
    figures in seconds, such as ``validate``'s, scale with it from one machine to the next."""
    return round(1000 * best_of(lambda: sum(i * i for i in range(2_000_000)), repeat=3), 1)


def _commit() -> str:
    """The checkout's commit, so a figure can be reproduced (empty outside a git checkout);
    ``+changes`` after it when tracked files differ from it (the results, the report and its
    notes aside), so a figure measured with code not yet committed says so."""
    import subprocess

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return ""
    prose = [":(exclude)bench/results", ":(exclude)BENCHMARKS.md", ":(exclude)bench/NOTES.md"]
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".", *prose)
    return head + ("+changes" if changed else "")


def save(name: str, figures: dict[str, object], command: str) -> Path:
    """Write ``bench/results/<name>.json`` with the figures, the machine and the command."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {
        "name": name,
        "command": command,
        "commit": _commit(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "figures": figures,
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    return path


def best_of(fn, repeat: int = 5) -> float:
    """Fastest of ``repeat`` timed calls, in seconds (the least disturbed by other work)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def median(values: list[float]) -> float:
    return statistics.median(values)


def decoded_size(url: str) -> int:
    """Size of ``url``'s body as the server sends it uncompressed (``Accept-Encoding: identity``).

    For responses that came compressed: what the browser had to decode.
    """
    import urllib.request

    request = urllib.request.Request(url, headers={"accept-encoding": "identity"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return len(response.read())
