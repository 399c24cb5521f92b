"""One step in a fresh CPython process: the child the CPython backend starts for each step.

Run as ``python -m promptdojo.checking.backends.cpython_step JOB RESULT``.

JOB is a JSON file with the serialized step and its default time limit; the outcomes are
appended to RESULT as JSON lines, one per cell as it ends (so what cells print cannot garble
them, a crash still leaves the cells that finished, and a step of many cells writes each outcome
once).
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any, TypedDict

from promptdojo.checking.judge import StepRunner
from promptdojo.checking.limits import ProcessLimiter
from promptdojo.checking.outcome import CellOutcome
from promptdojo.checking.serialize import step_from_dict


class StepLimits(TypedDict):
    """The process's own limits: CPU seconds (None: none) and the bytes a file may grow to."""

    cpu: float | None
    file_size: int


class StepJob(TypedDict):
    """The job file the CPython backend (``cpython.py``) writes for this process, which reads it."""

    step: dict[str, Any]
    time_limit: float
    seed: int | None
    numpy: bool
    limits: StepLimits


def main(argv: list[str]) -> int:
    job_path, result_path = Path(argv[0]), Path(argv[1])
    job: StepJob = json.loads(job_path.read_text(encoding="utf-8"))
    limits = job.get("limits")
    limiter = None
    if limits is not None:
        # A write past the file-size limit then fails with OSError instead of killing us.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        limiter = ProcessLimiter(limits["cpu"], limits["file_size"])
    runner = StepRunner(
        step_from_dict(job["step"]),
        job["time_limit"],
        limiter=limiter,
        seed=job.get("seed"),
        numpy=job.get("numpy", False),
    )
    with result_path.open("a", encoding="utf-8") as result:

        def save(outcome: CellOutcome) -> None:
            result.write(json.dumps(outcome.to_dict()) + "\n")
            result.flush()

        runner.run(on_outcome=save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
