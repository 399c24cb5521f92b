"""One step inside Pyodide: the script ``check.mjs`` runs in its worker thread.

It judges the step with :class:`~promptdojo.checking.judge.StepRunner`, as the CPython backend
does, but enforces time limits through Node's main thread: ``pdStart`` arms a timer that writes
SIGINT into the interrupt buffer, so an overrunning cell stops with ``KeyboardInterrupt``, which
the judge reports as a timeout. Outcomes go back one at a time through ``pdOutcome``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import js  # Pyodide's bridge to the JavaScript globals check.mjs sets

from promptdojo.checking.judge import StepRunner
from promptdojo.checking.serialize import step_from_dict


class InterruptLimiter:
    """Time limits by the main thread's interrupt, as in the browser."""

    def __call__(self, seconds: float) -> contextlib.AbstractContextManager[None]:
        return self._limit(seconds)

    @contextlib.contextmanager
    def _limit(self, seconds: float) -> Iterator[None]:
        js.pdStart(seconds)
        try:
            yield
        finally:
            js.pdStop()

    def expired(self) -> bool:
        """True when the main thread's timer, not the learner, raised the interrupt."""
        return bool(js.pdExpired())


def main() -> None:
    """Judge the job's step, reporting each outcome as it is known."""
    job = json.loads(js.pdJob)
    runner = StepRunner(
        step_from_dict(job["step"]),
        job["time_limit"],
        limiter=InterruptLimiter(),
        seed=job.get("seed"),
        numpy=job.get("numpy", False),
    )
    runner.run(on_outcome=lambda o: js.pdOutcome(json.dumps(o.to_dict())))
