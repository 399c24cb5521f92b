"""A cell's limits in CPython: SIGALRM raises :class:`CellTimeout` inside the running code.

Under ``promptdojo check`` each step's process also has (lesson.yaml can set each):

* a memory limit (``RLIMIT_AS``, set on the whole process as it starts: an allocation past it
  raises ``MemoryError``), :data:`DEFAULT_MEMORY_LIMIT_MB` by default;
* a CPU-time limit per cell (``RLIMIT_CPU``, re-armed before each cell: past it the cell stops
  with :class:`CellTimeout`), the cell's time limit by default;
* a file-size limit per cell (``RLIMIT_FSIZE``: a write past it fails with ``OSError``),
  :data:`DEFAULT_FILE_SIZE_LIMIT_MB` by default.

They guard against mistakes, not against a hostile lesson: a cell can raise its own soft limits.
Pyodide has no alarm; there the judge gets a limiter that uses the interrupt buffer instead
(:mod:`promptdojo.checking.backends.pyodide_step`).
"""

from __future__ import annotations

import contextlib
import math
import signal
import time
from collections.abc import Iterator

#: Megabytes of address space a step's process may use, unless lesson.yaml says otherwise.
DEFAULT_MEMORY_LIMIT_MB = 2048
#: Megabytes the largest file a cell writes may have, unless lesson.yaml says otherwise.
DEFAULT_FILE_SIZE_LIMIT_MB = 256
#: Megabytes of V8 heap a Node process of ``check --pyodide`` may use (Pyodide's own memory
#: is WebAssembly memory, outside it, and bounded by the memory limit).
NODE_HEAP_MB = 1024


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


@contextlib.contextmanager
def cpu_and_file_size(cpu_seconds: float, file_size: int) -> Iterator[None]:
    """Within the block, at most ``cpu_seconds`` more of CPU time (then :class:`CellTimeout`)
    and no file written past ``file_size`` bytes (POSIX; the process ignores SIGXFSZ)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_soft, cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)
    size_soft, size_hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + cpu_seconds)
    if cpu_hard != resource.RLIM_INFINITY:
        cpu = min(cpu, cpu_hard)
    if size_hard != resource.RLIM_INFINITY:
        file_size = min(file_size, size_hard)

    def spent(signum: int, frame: object) -> None:
        raise CellTimeout(f"the cell used more than {cpu_seconds:g} s of CPU time")

    previous = signal.signal(signal.SIGXCPU, spent)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu_hard))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, size_hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size_soft, size_hard))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_soft, cpu_hard))
        signal.signal(signal.SIGXCPU, previous)


class ProcessLimiter:
    """The limiter of a step's own process: each cell's time, CPU time and file size."""

    def __init__(self, cpu_limit: float | None, file_size: int) -> None:
        #: CPU seconds per cell (``None``: the cell's own time limit).
        self.cpu_limit = cpu_limit
        self.file_size = file_size

    @contextlib.contextmanager
    def __call__(self, seconds: float) -> Iterator[None]:
        cpu = self.cpu_limit if self.cpu_limit is not None else seconds
        with time_limit(seconds), cpu_and_file_size(cpu, self.file_size):
            yield
