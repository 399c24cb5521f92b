"""Run a step's process and, when it ends, end every process it left behind.

Run as ``python -I reaper.py [--limit NAME=VALUE]... -- COMMAND...`` by path, so that it imports
nothing but the standard library; each ``--limit`` is a resource limit set on COMMAND, e.g.
``--limit AS=4294967296`` for ``RLIMIT_AS``. :func:`promptdojo.checking.backends.process.run_job`
starts it in a session and process group of its own. On Linux it makes itself a *child
subreaper* (``prctl``): a process the cells start and then orphan, even one that left the group
with ``setsid``, is re-parented to it rather than to init. When COMMAND exits, or when the
reaper is told to stop (SIGTERM, at the step's budget), it kills every process below it and
reaps them, then exits with COMMAND's status.

Elsewhere (no ``prctl``), killing the process group at the end is all there is.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import subprocess
import sys
import time

#: ``PR_SET_CHILD_SUBREAPER`` of ``<linux/prctl.h>``.
PR_SET_CHILD_SUBREAPER = 36
#: Seconds the reaper spends killing and reaping what is left before it gives up.
REAP_SECONDS = 5.0


class Stop(Exception):
    """Raised by the signal handler: the step's budget ran out."""


def set_subreaper() -> bool:
    """Make this process the subreaper of its descendants; false where that is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """``{pid: parent pid}`` of every process visible in ``/proc``."""
    found: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
                fields = stat.read().rpartition(b")")[2].split()
        except OSError:
            continue  # it ended meanwhile
        found[int(name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """Every living process below ``root``, from ``/proc`` (empty where there is none)."""
    if not os.path.isdir("/proc"):
        return []
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    below, pending = [], list(children.get(root, []))
    while pending:
        pid = pending.pop()
        below.append(pid)
        pending += children.get(pid, [])
    return below


def reap_all(deadline: float) -> None:
    """Kill every descendant and reap this process's children until none is left."""
    me = os.getpid()
    while time.monotonic() < deadline:
        for pid in descendants(me):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            return  # nothing left below us
        time.sleep(0.01)


def limit_child(limits: list[str]) -> None:
    """Set each ``NAME=VALUE`` resource limit (soft and hard) on this process, for its child."""
    for item in limits:
        name, _, value = item.partition("=")
        kind = getattr(resource, f"RLIMIT_{name}")
        _, hard = resource.getrlimit(kind)
        wanted = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        resource.setrlimit(kind, (wanted, wanted))


def main(argv: list[str]) -> int:
    limits = []
    while argv and argv[0] == "--limit":
        limits.append(argv[1])
        argv = argv[2:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    set_subreaper()

    def stop(signum: int, frame: object) -> None:
        raise Stop

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stop)
    code = 128 + signal.SIGTERM
    try:
        child = subprocess.Popen(argv, preexec_fn=lambda: limit_child(limits))
        code = child.wait()
    except Stop:
        pass
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        reap_all(time.monotonic() + REAP_SECONDS)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
