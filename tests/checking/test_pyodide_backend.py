"""`promptdojo check --pyodide`: the same rules, in real Pyodide under Node."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from promptdojo.checking.outcome import cells_of
from promptdojo.course import discover, load_lesson
from promptdojo.pyodide.release import Release
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", "--pyodide", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "CI": "true"},
        timeout=900,
    )


def test_pass_fail_and_timeout_in_pyodide(tmp_path: Path) -> None:
    folder = FIXTURES / "pyodide" / "stdlib"
    done = check(str(folder), "--cache", str(tmp_path))
    out = done.stdout
    assert done.returncode == 1
    lines = set(out.splitlines())
    assert any(line.startswith(f"PASSED {folder}/01-passes.md::1::cell-1 ") for line in lines)
    assert any(line.startswith(f"PASSED {folder}/01-passes.md::1::half ") for line in lines)
    assert f"{folder}/02-fails.md:10: cell 'cell-2': raised: AssertionError: total is 6" in out
    assert (
        f"{folder}/03-times-out.md:6: cell 'spin': timed out: "
        "the cell ran longer than its time limit of 1 s"
    ) in out
    assert out.splitlines()[-1].startswith("5 passed, 2 failed, 0 skipped in ")


def test_a_cell_that_took_the_interrupt_may_wind_down(tmp_path: Path) -> None:
    # Interrupted at its limit, then 2.5 s in `finally` (past the grace period for taking the
    # interrupt, within the wind-down): a time-out, not a worker that had to be terminated.
    folder = FIXTURES / "pyodide" / "winds-down"
    done = check(str(folder), "--cache", str(tmp_path))
    out = done.stdout
    assert (
        f"{folder}/01-winds-down.md:9: cell 'tidy': timed out: "
        "the cell ran longer than its time limit of 1 s"
    ) in out
    assert "ran past its" not in out  # the worker was not terminated
    # The next cell uses nothing the stopped one bound: it runs, in the same Python.
    assert out.splitlines()[-1].startswith("1 passed, 1 failed, 0 skipped in ")


def test_the_stop_rule_gives_up_on_a_cell_that_never_takes_or_never_ends(tmp_path: Path) -> None:
    # The page's own stop rule (static/js/shared/stopper.js), through the Node bundle: a loop
    # inside one C call never takes the interrupt, and a `finally` that never ends outlives the
    # wind-down. Each step is its own Node process, terminated with the reason.
    folder = FIXTURES / "pyodide" / "stuck"
    done = check(str(folder), "--cache", str(tmp_path))
    out = done.stdout
    assert done.returncode == 1, out
    assert (
        f"{folder}/01-ignores-the-interrupt.md:9: cell 'c-loop': a cell ran past its 1 s time "
        "limit and did not take the interrupt within 1.5 s"
    ) in out
    assert (
        f"{folder}/02-never-winds-down.md:9: cell 'forever': a cell ran past its 1 s time "
        "limit and took the interrupt but did not stop within 5 s more"
    ) in out
    assert out.splitlines()[-1].startswith("0 passed, 2 failed, 0 skipped in ")


def test_stdout_proves_pyodide_ran_it(tmp_path: Path) -> None:
    # The passing cell prints sys.platform; --record keeps what it printed.
    lesson = tmp_path / "stdlib"
    subprocess.run(["cp", "-r", str(FIXTURES / "pyodide" / "stdlib"), str(lesson)], check=True)
    (lesson / "02-fails.md").unlink()
    (lesson / "03-times-out.md").unlink()
    done = check(str(lesson), "--cache", str(tmp_path), "--record")
    assert done.returncode == 0, done.stdout
    assert '"stdout": "emscripten\\n"' in (lesson / "recorded" / "01-passes.json").read_text()


def test_missing_package_is_not_run_never_passed(tmp_path: Path) -> None:
    done = check(str(FIXTURES / "lessons" / "needs-numpy"), "--cache", str(tmp_path))
    assert done.returncode == 3
    lesson = FIXTURES / "lessons" / "needs-numpy"
    assert (
        f"NOT-RUN {lesson}: numpy is not cached in {tmp_path}. "
        "Run `promptdojo pyodide fetch numpy`."
    ) in done.stdout
    assert done.stdout.count("NOT-RUN") == 1, "one line per lesson, not one per cell"
    assert "PASSED" not in done.stdout
    assert done.stdout.splitlines()[-1].startswith("0 passed, 0 failed, 0 skipped, 1 not run")


def test_the_shipped_lessons_pass_in_pyodide_with_numpy_and_their_records(
    numpy_release: Release,
) -> None:
    """Every cell of every lesson, in Pyodide 0.29.0 with numpy under Node, prints its record,
    and every wrong answer meets its expected message there too."""
    done = check("--pyodide-dir", str(numpy_release.path), "--check-outputs", str(ROOT / "lessons"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    steps = [step for folder in discover(ROOT / "lessons") for step in load_lesson(folder).steps]
    cells = sum(len(cells_of(step)) for step in steps)
    wrong = [w.id for step in steps for e in step.exercises for w in e.wrong]
    assert len(wrong) >= 30
    for cell_id in wrong:
        assert f"::{cell_id} (" in done.stdout
    assert done.stdout.splitlines()[-1].startswith(f"{cells} passed, 0 failed, 0 skipped in ")
    assert "drifted" not in done.stdout


def test_the_lesson_seed_gives_pyodide_the_same_draws_as_cpython(tmp_path: Path) -> None:
    import random

    lesson = tmp_path / "seeded"
    lesson.mkdir()
    (lesson / "lesson.yaml").write_text("id: seeded\ntitle: S\nchapter: c\nseed: 7\n")
    (lesson / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python {#draw}\nimport random\n\nprint(random.random())\n```\n"
    )
    done = check(str(lesson), "--cache", str(tmp_path), "--record")
    assert done.returncode == 0, done.stdout + done.stderr
    record = (lesson / "recorded" / "01-a.json").read_text()
    assert f'"stdout": "{random.Random(7).random()}\\n"' in record
    cpython = subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", str(lesson), "--check-outputs"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "CI": "true"},
        timeout=300,
    )
    assert cpython.returncode == 0, cpython.stdout


def test_wrong_answers_are_proven_in_pyodide(tmp_path: Path) -> None:
    folder = FIXTURES / "checking" / "wrong"
    done = check(str(folder), "--cache", str(tmp_path))
    out = done.stdout
    step = f"{folder}/01-double.md"
    assert f"PASSED {step}::1::double-wrong-1 (" in out
    assert f"{step}:30: cell 'double-wrong-2': the check of exercise 'double' accepts" in out
    assert f"{step}:40: cell 'double-wrong-3': the check rejects this wrong answer with" in out
    assert out.splitlines()[-1].startswith("3 passed, 2 failed, 0 skipped in ")
