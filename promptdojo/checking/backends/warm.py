"""A warm parent for step processes: Python started and numpy and the checker imported once, then
one forked child per step (Linux only; :mod:`.forked` talks to it).

Run as ``python -m promptdojo.checking.backends.warm [--numpy]``, in the environment the steps'
cells get (:mod:`promptdojo.checking.environment`, ``PYTHONHASHSEED`` included). It reads one
request per line on stdin, JSON ``{"job", "result", "stdout", "stderr", "limits"}``, and for each
forks a *step leader* that does what :mod:`.reaper` does for a fresh process: a session and process
group of its own, child subreaper of everything below it, the step's process (a second fork,
under the resource ``limits``, with stdin on /dev/null and stdout and stderr in the given files)
running :mod:`.cpython_step`, and, when that ends or the leader gets SIGTERM, every process below
it killed and reaped. The parent answers ``{"pid": leader}``, then ``{"exited": code}`` (the
leader is left unreaped, so its group id cannot be reused while the caller kills the group), and
reaps it when the caller writes ``reap``. End of input ends the parent.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
import traceback

from promptdojo.checking.backends import cpython_step, reaper

#: Signals a step leader turns into :class:`reaper.Stop`; the step's process gets them back.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _fresh_numbers() -> None:
    """Fresh entropy for numpy's global generator, as a new process would have drawn (``random``
    reseeds itself in a forked child); a lesson's seed is applied later, by the step's runner."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _step_process(request: dict) -> int:
    """In the step's own process: files and limits in place, then the step."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    reaper.limit_child([f"{name}={value}" for name, value in request["limits"].items()])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_APPEND), fd)
    os.closerange(3, 1024)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - fd 0, owned by the process
    _fresh_numbers()
    sys.argv = [cpython_step.__file__, request["job"], request["result"]]
    return cpython_step.main(sys.argv[1:])


def _leader(request: dict) -> int:
    """The step leader: what :func:`reaper.main` is for a fresh process, with a fork."""
    os.setsid()
    reaper.set_subreaper()
    code = 128 + signal.SIGTERM

    def stop(signum: int, frame: object) -> None:
        raise reaper.Stop

    for signum in STOP_SIGNALS:
        signal.signal(signum, stop)
    try:
        child = os.fork()
        if child == 0:
            _exit_with(_step_process, request)
        code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
    except reaper.Stop:
        pass
    finally:
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        reaper.reap_all(time.monotonic() + reaper.REAP_SECONDS)
    return code if code >= 0 else 128 - code


def _exit_with(function, request: dict) -> None:
    """Run ``function(request)`` in a forked process and leave with its status, never returning
    into the parent's loop (a traceback goes to the step's stderr file)."""
    code = 1
    try:
        code = function(request)
    except BaseException:  # whatever it was, this process ends here
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream has nothing left to say
                stream.flush()
        os._exit(code)


def _answer(out, message: dict) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def serve(requests, out) -> None:
    """Fork a step leader per request line until the input ends (see the module's doc)."""
    while line := requests.readline():
        request = json.loads(line)
        leader = os.fork()
        if leader == 0:  # our input and answers stay with us: the step's files take their place
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_APPEND), fd)
            os.closerange(3, 1024)
            _exit_with(_leader, request)
        _answer(out, {"pid": leader})
        info = os.waitid(os.P_PID, leader, os.WEXITED | os.WNOWAIT)
        exited = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        _answer(out, {"exited": exited})
        requests.readline()  # "reap": the caller has killed the leader's group
        os.waitpid(leader, 0)


def main(argv: list[str]) -> int:
    if "--numpy" in argv:
        # Imported once here, for every step's process; where numpy is missing, each step's
        # cells say so, as in a fresh process.
        with contextlib.suppress(ImportError):
            import numpy  # noqa: F401

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the caller ends us by closing our input
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing printed by accident reaches `out`
    _answer(out, {"ready": os.getpid()})
    serve(sys.stdin, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
