"""Steps forked from a warm parent (Linux): one start-up for many steps, each step still alone."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from promptdojo.checking.backends import forked
from promptdojo.checking.backends.cpython import ONE_BLAS_THREAD, run_step_in_process
from promptdojo.checking.backends.process import json_lines
from promptdojo.checking.environment import cell_environment
from promptdojo.checking.orchestrator import check
from promptdojo.checking.outcome import Status
from promptdojo.checking.serialize import step_to_dict
from promptdojo.course import load_lesson
from tests.checking.test_step_processes import SLEEPER, marker, running  # noqa: F401 - fixture

pytestmark = pytest.mark.skipif(not forked.available(), reason="steps are forked on Linux only")

#: The module its step leader's parent runs, the leader's parent's pid, and whether numpy was
#: imported before the cell imported it; then a number from numpy's global generator.
WHO = """\
import os, sys
from pathlib import Path
leader = int(Path(f"/proc/{os.getppid()}/stat").read_text().rpartition(")")[2].split()[1])
print(Path(f"/proc/{leader}/cmdline").read_bytes().split(b"\\0")[2].decode(), leader)
print("numpy" in sys.modules)
import numpy as np
print(np.random.randint(1 << 30))"""


def lesson_of(folder: Path, *steps: str, extra: str = ""):
    folder.mkdir()
    (folder / "lesson.yaml").write_text(
        f'id: {folder.name}\ntitle: T\nchapter: "ch 0"\ntime_limit: 5\npackages: [numpy]\n{extra}'
    )
    for number, code in enumerate(steps, 1):
        body = f"---\ntitle: S{number}\n---\n\n# S\n\n```python\n{code}\n```\n"
        (folder / f"0{number}-s.md").write_text(body)
    return load_lesson(folder)


def printed(lesson) -> list[list[str]]:
    return [run_step_in_process(lesson, s).outcomes[0].output.stdout.split() for s in lesson.steps]


def test_the_steps_fork_from_one_warm_parent_that_imported_numpy(tmp_path: Path) -> None:
    first, second = printed(lesson_of(tmp_path / "who", WHO, WHO))
    assert first[0] == second[0] == forked.WARM_MODULE
    assert first[1] == second[1] != str(os.getpid())
    assert first[2] == second[2] == "True"


def test_unseeded_numbers_differ_between_steps_and_a_seed_still_fixes_them(tmp_path: Path) -> None:
    first, second = printed(lesson_of(tmp_path / "fresh", WHO, WHO))
    assert first[3] != second[3]
    seeded = lesson_of(tmp_path / "seeded", WHO, WHO, extra="seed: 7\n")
    assert printed(seeded)[0][3] == printed(seeded)[1][3]


def test_a_crashed_step_is_reported_and_the_next_step_still_runs(tmp_path: Path) -> None:
    crash = "import os, signal\nprint('before', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)"
    lesson_of(tmp_path / "crash", crash, "print('after')")
    result = check([tmp_path / "crash"], jobs=1)
    first, second = (step.outcomes for step in result.steps)
    assert first[0].status is Status.FAILED
    assert "the step's process crashed (exit 139)" in first[0].message
    assert [o.status for o in second] == [Status.PASSED]
    assert second[0].output.stdout == "after\n"


def test_a_step_past_its_budget_is_killed_with_what_it_started(
    tmp_path: Path,
    marker: str,  # noqa: F811 - the fixture
) -> None:
    # The cell ignores the cell limit's alarm and starts a detached sleeper: at the budget the
    # step's whole tree goes, and the warm parent serves the next step.
    runaway = (
        "import os, signal, sys, time\n"
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    {SLEEPER.format(m=marker)}\n"
        "time.sleep(300)"
    )
    lesson = lesson_of(tmp_path / "runaway", runaway, "print('next')")
    env = cell_environment(defaults=ONE_BLAS_THREAD)
    ended = [
        forked.run_forked(
            [sys.executable, "-c", "raise SystemExit(3)"],
            {"step": step_to_dict(step), "time_limit": 5, "seed": None, "numpy": True},
            2.0,
            crashed=lambda done: f"crashed {done.returncode}",
            killed="the step's process",
            env=env,
            read=json_lines,
            limits={},
            numpy=True,
        )
        for step in lesson.steps
    ]
    assert ended[0].why == "the step's process was killed after 2 s"
    assert running(marker) == []
    assert ended[1].why == ""
    assert [o["output"]["stdout"] for o in ended[1].data] == ["next\n"]
