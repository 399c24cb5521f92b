"""A step's process under `check` leaves no process behind, and a forked child cannot hold it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdojo.checking.backends.cpython import run_step_in_process
from promptdojo.checking.backends.process import run_job
from promptdojo.checking.outcome import Status
from promptdojo.course import load_lesson

#: A process that lives long: a cell's leftover unless something ends it.
SLEEPER = 'os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", {m!r}])'


def running(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` (each test's own, so others never count)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        if name.isdigit() and marker.encode() in cmdline.split(b"\0"):
            found.append(int(name))
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique word for this test's leftovers; any still running at the end are ended here."""
    word = f"promptdojo-leftover-{uuid.uuid4().hex}"
    yield word
    for pid in running(word):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def lesson_with(folder: Path, *cells: str):
    folder.mkdir()
    (folder / "lesson.yaml").write_text(
        'id: leftovers\ntitle: Leftovers\nchapter: "ch 0"\ntime_limit: 5\n'
    )
    body = "".join(f"```python\n{code}\n```\n\n" for code in cells)
    (folder / "01-fork.md").write_text(f"---\ntitle: Fork\n---\n\n# Fork\n\n{body}")
    return load_lesson(folder)


pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="counts processes in /proc")


def test_a_cell_that_forks_neither_holds_the_step_nor_outlives_it(
    tmp_path: Path, marker: str
) -> None:
    forks = f"import os, sys\nif os.fork() == 0:\n    {SLEEPER.format(m=marker)}\nprint('on')"
    lesson = lesson_with(tmp_path / "leftovers", forks, "print('next')")
    assert running(marker) == []
    result = run_step_in_process(lesson, lesson.steps[0])
    assert [o.status for o in result.outcomes] == [Status.PASSED, Status.PASSED]
    assert [o.output.stdout for o in result.outcomes] == ["on\n", "next\n"]
    assert running(marker) == []


def test_a_child_in_its_own_session_is_ended_too(tmp_path: Path, marker: str) -> None:
    setsid = (
        "import os, sys\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        {SLEEPER.format(m=marker)}\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "print('detached')"
    )
    lesson = lesson_with(tmp_path / "leftovers", setsid)
    result = run_step_in_process(lesson, lesson.steps[0])
    assert [o.status for o in result.outcomes] == [Status.PASSED]
    assert running(marker) == []


def test_a_step_killed_at_its_budget_takes_its_detached_children_along(
    tmp_path: Path, marker: str
) -> None:
    # The step's process starts a child in its own session, then never ends: at the budget,
    # the whole tree goes, the detached child included.
    script = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    {SLEEPER.format(m=marker)}\n"
        "time.sleep(300)\n"
    )
    ended = run_job(
        [sys.executable, "-c", script],
        {},
        1.0,
        crashed=lambda done: "crashed",
        killed="the test's process",
    )
    assert ended.why == "the test's process was killed after 1 s"
    assert running(marker) == []


def test_a_forked_child_holding_the_output_does_not_hold_the_step(
    tmp_path: Path, marker: str
) -> None:
    # The step's process writes its result and exits; its forked child (holding the same
    # stdout and stderr) sleeps on. The step ends with its process, not at its budget.
    script = (
        "import json, os, sys\n"
        "if os.fork() == 0:\n"
        f"    {SLEEPER.format(m=marker)}\n"
        "open(sys.argv[2], 'w').write(json.dumps(['done']))\n"
    )
    ended = run_job(
        [sys.executable, "-c", script],
        {},
        10.0,
        crashed=lambda done: "crashed",
        killed="the test's process",
    )
    assert (ended.data, ended.why) == (["done"], "")
    assert running(marker) == []
