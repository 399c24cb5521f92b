"""A cell's time limit in CPython: SIGALRM raises :class:`CellTimeout` inside the running code.

Pyodide has no alarm; there the judge gets a limiter that uses the interrupt buffer instead
(:mod:`promptdojo.checking.backends.pyodide_step`).
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator


class CellTimeout(BaseException):
    """Raised inside a cell that ran past its time limit (a BaseException, so
    ``except Exception`` in learner code cannot swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`CellTimeout` in the running code after ``seconds`` (main thread, POSIX).

    An alarm already set by someone else (pytest-timeout) is respected: if it would fire first,
    it is left alone; otherwise it is re-armed, less the time spent, when the cell ends.
    """
    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows
        yield
        return
    outer, _ = signal.getitimer(signal.ITIMER_REAL)
    if 0 < outer <= seconds:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise CellTimeout(f"the cell ran longer than its time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 1e-3))
