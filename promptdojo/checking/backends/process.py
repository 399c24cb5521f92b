"""The shape both backends share: job file → subprocess under a budget → result file → verdicts.

The step's process runs below :mod:`.reaper`, in a session and process group of its own, with its
output in files rather than pipes: a process a cell forks cannot hold the step open, and none
outlives it (the reaper kills what is left below it, this module kills the whole group).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from promptdojo.checking.outcome import CellOutcome, cells_of, fill_missing
from promptdojo.course.model import Lesson, Step

#: Seconds a step's process may take beyond the sum of its cells' limits (start-up, imports).
PROCESS_MARGIN = 30.0
#: The script every step's process runs under (by path: it imports only the standard library).
REAPER = Path(__file__).with_name("reaper.py")
#: Seconds the reaper gets, once told to stop, to kill what is below it before the group is killed.
STOP_SECONDS = 6.0
#: Bytes of a step process's own output kept to explain a crash (its end).
OUTPUT_TAIL = 64 * 1024


def process_budget(lesson: Lesson, step: Step) -> float:
    """Seconds a step's process may take: every cell's limit (exercises run up to three parts:
    starter, check, solution, check), plus start-up and imports."""
    budget = sum(lesson.time_limit_of(c) for c in cells_of(step)) + PROCESS_MARGIN
    return budget + sum(2 * lesson.time_limit_of(e.starter) for e in step.exercises)


@dataclass(frozen=True)
class Ended:
    """How a step's process ended: what it wrote (``None`` if nothing) and why it stopped early."""

    data: Any
    why: str


def run_job(
    command: list[str],
    job: Mapping[str, Any],
    budget: float,
    *,
    crashed: Callable[[subprocess.CompletedProcess[str]], str],
    killed: str,
    env: Mapping[str, str] | None = None,
    read: Callable[[str], Any] = json.loads,
    limits: Mapping[str, int] | None = None,
) -> Ended:
    """Write ``job``, run ``command + [JOB, RESULT]`` for at most ``budget`` seconds, read RESULT.

    ``crashed`` words a non-zero exit; ``killed`` names what was killed at the budget; ``read``
    turns RESULT's text into data (one JSON document by default; :func:`json_lines`);
    ``limits`` are resource limits on the command, by name (``{"AS": bytes}`` for RLIMIT_AS).
    """
    with tempfile.TemporaryDirectory(prefix="promptdojo-check-") as tmp:
        job_file, result = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job_file.write_text(json.dumps(job), encoding="utf-8")
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        why = ""
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-I", str(REAPER)),
                    *(arg for n, v in (limits or {}).items() for arg in ("--limit", f"{n}={v}")),
                    "--",
                    *(*command, str(job_file), str(result)),
                ],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=dict(env) if env is not None else None,
                start_new_session=True,
            )
        try:
            if not _exited(process.pid, budget):
                why = f"{killed} was killed after {budget:g} s"
                process.send_signal(signal.SIGTERM)  # the reaper kills what is below it
                _exited(process.pid, STOP_SECONDS)
        finally:
            # The leader is not reaped yet, so its group id cannot have been reused.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if not why and process.returncode != 0:
            done = subprocess.CompletedProcess(
                process.args, process.returncode, _tail(out), _tail(err)
            )
            why = crashed(done)
        data = read(result.read_text(encoding="utf-8")) if result.is_file() else None
    return Ended(data, why)


def json_lines(text: str) -> list[Any]:
    """Every complete line of ``text`` as JSON (a line cut short by a crash is left out)."""
    lines = text.split("\n")[:-1]  # what follows the last newline was never finished
    return [json.loads(line) for line in lines if line]


def _exited(pid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``pid`` to exit, without reaping it."""
    if hasattr(os, "pidfd_open"):
        fd = os.pidfd_open(pid)
        try:
            return bool(select.select([fd], [], [], timeout)[0])
        finally:
            os.close(fd)
    deadline = time.monotonic() + timeout  # pragma: no cover - no pidfd (not Linux)
    while time.monotonic() < deadline:  # pragma: no cover
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
            return True
        time.sleep(0.05)
    return False  # pragma: no cover


def _tail(path: Path) -> str:
    """The end of an output file, as text."""
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - OUTPUT_TAIL))
        return file.read().decode("utf-8", errors="replace")


def complete(step: Step, outcomes: list[CellOutcome], why: str) -> list[CellOutcome]:
    """``outcomes``, plus a failure and skips for the cells the process never reported."""
    if len(outcomes) < len(cells_of(step)):
        return fill_missing(step, outcomes, why)
    return outcomes
