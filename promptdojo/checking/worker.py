"""A fresh process that runs one step: ``python -m promptdojo.checking.worker JOB RESULT``.

JOB is a JSON file with the serialized step and its default time limit; the outcomes are written
to RESULT as JSON, one per cell, so what cells print cannot garble them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from promptdojo.checking.serialize import step_from_dict
from promptdojo.checking.steprun import StepRunner


def main(argv: list[str]) -> int:
    job_path, result_path = Path(argv[0]), Path(argv[1])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    runner = StepRunner(step_from_dict(job["step"]), job["time_limit"])
    outcomes = []

    def save(outcome) -> None:
        # Written after every cell, so a hard crash still leaves the cells that finished.
        outcomes.append(outcome.to_dict())
        result_path.write_text(json.dumps(outcomes), encoding="utf-8")

    runner.run(on_outcome=save)
    result_path.write_text(json.dumps(outcomes), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
