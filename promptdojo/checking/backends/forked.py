"""Steps forked from a warm parent (:mod:`.warm`) instead of started as fresh processes (Linux).

A fresh process per step pays Python's start and the imports (numpy, the checker) every time,
about 0.2 s a step. A warm parent pays them once per environment (the cells' environment and
hash seed, and whether the lesson uses numpy), and forks each step a leader and a process of its
own: the same isolation as :func:`.process.run_job` gives (a session and process group per
step, limits on the step's process, everything it leaves behind killed, the budget enforced
here), without the start-up. Parents are kept per environment (and working directory), one per
step running at once, and end with this process. A step's process ends with ``os._exit`` once its
cells are done: what a fresh process would do at exit (``atexit`` functions, waiting for threads a
cell left running) is left out, as nothing of it reaches a cell's outcome. Where there is no
fork (or a parent cannot start), steps run as before.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from promptdojo.checking.backends.process import STOP_SECONDS, Ended, _tail, run_job

WARM_MODULE = "promptdojo.checking.backends.warm"
#: Seconds a warm parent may take to start (imports) or to answer that a step started.
START_SECONDS = 60.0


def available() -> bool:
    """Whether steps can be forked here: Linux (fork, and ``/proc`` to find what a step left)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class ParentGone(Exception):
    """The warm parent ended or stopped answering."""


class WarmParent:
    """One warm parent process and its line-by-line conversation."""

    def __init__(self, env: Mapping[str, str], numpy: bool) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", WARM_MODULE, *(["--numpy"] if numpy else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,
        )
        self._buffer = b""
        if "ready" not in self.read(START_SECONDS):
            raise ParentGone("the warm parent did not start")

    def send(self, message: object) -> None:
        try:
            self.process.stdin.write(json.dumps(message).encode() + b"\n")
            self.process.stdin.flush()
        except OSError as error:
            raise ParentGone(str(error)) from error

    def read(self, timeout: float) -> dict:
        """The next answer, within ``timeout`` seconds (``{}`` when none came in time)."""
        deadline, fd = time.monotonic() + timeout, self.process.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return {}
            chunk = os.read(fd, 4096)
            if not chunk:
                raise ParentGone("the warm parent ended")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()  # the parent ends at the end of its input
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_idle: dict[tuple, list[WarmParent]] = {}
_lock = threading.Lock()


def _take(key: tuple, env: Mapping[str, str], numpy: bool) -> WarmParent:
    with _lock:
        if _idle.get(key):
            return _idle[key].pop()
    return WarmParent(env, numpy)


def _give(key: tuple, parent: WarmParent) -> None:
    with _lock:
        _idle.setdefault(key, []).append(parent)


@atexit.register
def close_all() -> None:
    """End every idle warm parent (each also ends by itself when this process does)."""
    with _lock:
        parents = [p for group in _idle.values() for p in group]
        _idle.clear()
    for parent in parents:
        parent.close()


def run_forked(
    command: list[str],
    job: Mapping[str, Any],
    budget: float,
    *,
    crashed: Callable[[subprocess.CompletedProcess[str]], str],
    killed: str,
    env: Mapping[str, str],
    read: Callable[[str], Any],
    limits: Mapping[str, int],
    numpy: bool,
) -> Ended:
    """:func:`.process.run_job` for a step of :mod:`.cpython_step`, forked from a warm parent;
    ``command`` (the fresh process's) runs only where no warm parent can be had."""
    key = (tuple(sorted(env.items())), numpy, os.getcwd())  # a parent keeps its start's cwd
    try:
        parent = _take(key, env, numpy)
    except (OSError, ParentGone):
        parent = None
    if parent is None:
        return run_job(
            command, job, budget, crashed=crashed, killed=killed, env=env, read=read, limits=limits
        )
    with tempfile.TemporaryDirectory(prefix="promptdojo-check-") as tmp:
        paths = {name: Path(tmp) / name for name in ("job", "result", "stdout", "stderr")}
        paths["job"].write_text(json.dumps(job), encoding="utf-8")
        for name in ("stdout", "stderr"):
            paths[name].touch()
        try:
            code, why = _run(parent, {k: str(p) for k, p in paths.items()}, budget, killed, limits)
            _give(key, parent)
        except ParentGone as error:
            parent.close()
            code, why = 1, f"{killed} was lost: its warm parent ended ({error})"
        if not why and code != 0:
            tails = _tail(paths["stdout"]), _tail(paths["stderr"])
            why = crashed(subprocess.CompletedProcess(command, code, *tails))
        result = paths["result"]
        data = read(result.read_text(encoding="utf-8")) if result.is_file() else None
    return Ended(data, why)


def _run(
    parent: WarmParent, paths: dict[str, str], budget: float, killed: str, limits: Mapping
) -> tuple[int, str]:
    """Have ``parent`` fork the step; its exit code, and why it was stopped (``""``: it ended)."""
    parent.send({**paths, "limits": dict(limits)})
    leader = parent.read(START_SECONDS).get("pid")
    if leader is None:
        raise ParentGone("the warm parent did not start the step")
    why = ""
    exited = parent.read(budget)
    if not exited:
        why = f"{killed} was killed after {budget:g} s"
        with contextlib.suppress(ProcessLookupError):
            os.kill(leader, signal.SIGTERM)  # the leader kills what is below it
        exited = parent.read(STOP_SECONDS)
    # The leader is not reaped until we say so, so its group id cannot have been reused.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)
    exited = exited or parent.read(START_SECONDS)
    if not exited:
        raise ParentGone("the warm parent did not see the step end")
    parent.send("reap")
    return int(exited["exited"]), why
