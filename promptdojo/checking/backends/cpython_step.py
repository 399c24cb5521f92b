"""One step in a fresh CPython process: the child the CPython backend starts for each step.

Run as ``python -m promptdojo.checking.backends.cpython_step JOB RESULT``.

JOB is a JSON file with the serialized step and its default time limit; the outcomes are written
to RESULT as JSON, one per cell, so what cells print cannot garble them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from promptdojo.checking.judge import StepRunner
from promptdojo.checking.outcome import CellOutcome
from promptdojo.checking.serialize import step_from_dict


def main(argv: list[str]) -> int:
    job_path, result_path = Path(argv[0]), Path(argv[1])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    runner = StepRunner(
        step_from_dict(job["step"]),
        job["time_limit"],
        seed=job.get("seed"),
        numpy=job.get("numpy", False),
    )
    outcomes = []

    def save(outcome: CellOutcome) -> None:
        # Written after every cell, so a hard crash still leaves the cells that finished.
        outcomes.append(outcome.to_dict())
        result_path.write_text(json.dumps(outcomes), encoding="utf-8")

    runner.run(on_outcome=save)
    result_path.write_text(json.dumps(outcomes), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
