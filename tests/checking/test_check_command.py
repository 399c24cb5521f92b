"""`promptdojo check`: exit status, plain CI output, markdown lines, JUnit, recorded outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true"}
    return subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_a_passing_lesson_exits_0_with_plain_lines(tmp_path: Path) -> None:
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    (lesson / "02-errors.md").unlink()
    (lesson / "03-exercise.md").rename(lesson / "02-exercise.md")
    done = check(str(lesson), "-j", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith(f"PASSED {lesson}/01-where-am-i.md::1::cell-1 (") for line in lines)
    assert any(line.startswith("SKIPPED") and "no-ci: needs the network" in line for line in lines)
    assert "\x1b[" not in done.stdout, "no terminal escapes when not on a terminal"
    assert lines[-1].startswith("6 passed, 0 failed, 1 skipped in ")


def test_a_failure_exits_1_and_points_at_the_markdown(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    done = check(str(FIXTURES / "lessons" / "hello"), "--junit-xml", str(report))
    assert done.returncode == 1
    md = FIXTURES / "lessons" / "hello" / "02-errors.md"
    out = done.stdout
    assert f"{md}:6: cell 'cell-1': raised: ZeroDivisionError: division by zero" in out
    assert ">  7 |     return 1 / x" in out
    assert f'File "{md}", line 10, in <module>' in out
    assert f'File "{md}", line 7, in inverse' in out
    assert out.splitlines()[-1].startswith("6 passed, 1 failed, 1 skipped in ")

    suites = ET.parse(report).getroot()
    (suite,) = suites.findall("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("hello", "8", "1")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert [(c.get("classname"), c.get("name"), c.get("line")) for c in failed] == [
        (f"{md}::2", "cell-1", "6")
    ]


def test_breaking_a_real_lesson_cell_fails_with_its_file_and_line(tmp_path: Path) -> None:
    lesson = tmp_path / "decoding-kv-cache-quantization"
    shutil.copytree(ROOT / "lessons" / "decoding-kv-cache-quantization", lesson)
    step, *later = sorted(lesson.glob("*.md"))
    for other in later:  # one step is enough: the real lessons run once per `make test`
        other.unlink()
    lines = step.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("print("))
    lines[index] = "print(undefined_name)"
    step.write_text("\n".join(lines) + "\n")
    done = check(str(lesson))
    assert done.returncode == 1
    assert f"{step}:" in done.stdout
    assert "NameError: name 'undefined_name' is not defined" in done.stdout
    assert f'File "{step}", line {index + 1}, in <module>' in done.stdout


def test_validation_errors_fail_the_check_in_the_same_format() -> None:
    folder = FIXTURES / "malformed" / "syntax-error"
    done = check(str(folder))
    assert done.returncode == 1
    assert f"{folder}/01-a.md:7: Python syntax error in cell 'cell-1'" in done.stdout
    assert "1 validation error in " in done.stdout


def test_record_then_check_outputs_catches_drift(tmp_path: Path) -> None:
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    (lesson / "02-errors.md").unlink()
    (lesson / "03-exercise.md").rename(lesson / "02-exercise.md")
    assert check(str(lesson), "--record").returncode == 0
    recorded = lesson / "recorded" / "01-where-am-i.json"
    assert '"stdout": "platform: linux\\n"' in recorded.read_text()
    assert check(str(lesson), "--check-outputs").returncode == 0
    step = lesson / "01-where-am-i.md"
    step.write_text(step.read_text().replace("answer = 6 * 7", "answer = 6 * 8"))
    done = check(str(lesson), "--check-outputs")
    assert done.returncode == 1
    assert f"{step}:16: cell 'cell-2': output differs from its record" in done.stdout
    assert "-[text/plain] 42" in done.stdout
    assert "+[text/plain] 48" in done.stdout
    assert f"{step}:16: cell 'cell-2': recorded for an earlier version of this cell: run " in (
        done.stdout
    )
    assert f"`promptdojo check {step}::cell-2 --record`" in done.stdout
    assert "\n1 output drifted; `promptdojo check --record` accepts them" in done.stdout
    last = done.stdout.splitlines()[-1]
    assert last.startswith("6 passed, 0 failed, 1 skipped, 1 output drifted, 1 stale record in ")
    refresh = check(f"{step}::cell-2", "--record")
    assert refresh.returncode == 0, refresh.stdout
    assert check(str(lesson), "--check-outputs").returncode == 0


@pytest.mark.parametrize("text", ['{"cell-1": {"value": "42"}}', "[]"])
def test_check_outputs_finds_a_record_in_the_wrong_shape_missing(tmp_path: Path, text: str) -> None:
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    (lesson / "recorded" / "01-where-am-i.json").write_text(text)
    step = lesson / "01-where-am-i.md"
    done = check(str(step), "--check-outputs")
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 1
    assert (
        f"{step}:8: cell 'cell-1': output differs from its record\nno recorded output: run "
        "`promptdojo check --record`" in done.stdout
    )


def test_a_changed_cell_with_the_same_output_is_a_stale_record(tmp_path: Path) -> None:
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    step = lesson / "01-where-am-i.md"
    step.write_text(step.read_text().replace("answer = 6 * 7", "answer = 7 * 6"))
    done = check(f"{step}", "--check-outputs")
    assert done.returncode == 1
    assert "output differs" not in done.stdout
    assert f"{step}:16: cell 'cell-2': recorded for an earlier version of this cell" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("2 passed, 0 failed, 0 skipped, 1 stale record")


def test_one_validation_error_is_singular(tmp_path: Path) -> None:
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    (lesson / "lesson.yaml").write_text((lesson / "lesson.yaml").read_text() + "sed: 1\n")
    done = check(str(lesson))
    assert done.stdout.splitlines()[-1].startswith(
        "0 passed, 0 failed, 0 skipped, 1 validation error in "
    )


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_parallel_and_serial_runs_agree(jobs: str) -> None:
    done = check(str(FIXTURES / "lessons" / "hello"), "-j", jobs)
    assert done.stdout.splitlines()[-1].startswith("6 passed, 1 failed, 1 skipped")


def test_check_takes_one_step_file(tmp_path: Path) -> None:
    step = FIXTURES / "lessons" / "hello" / "03-exercise.md"
    done = check(str(step))
    assert done.returncode == 0, done.stdout + done.stderr
    ids = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("PASSED")]
    assert ids
    assert all(i.startswith(f"{step}::3::") for i in ids)
    assert "02-errors.md" not in done.stdout  # the failing step of the lesson did not run


@pytest.mark.parametrize("cell", ["double", "3::double"])
def test_check_takes_file_double_colon_cell_id_as_pytest_does(cell: str) -> None:
    step = FIXTURES / "lessons" / "hello" / "03-exercise.md"
    done = check(f"{step}::{cell}")
    assert done.returncode == 0, done.stdout + done.stderr
    reported = [line for line in done.stdout.splitlines() if line.split(" ")[0] == "PASSED"]
    assert [line.split()[1] for line in reported] == [f"{step}::3::double"]
    assert done.stdout.splitlines()[-1].startswith("1 passed, 0 failed, 0 skipped in ")


def test_check_names_an_unknown_cell_and_lists_the_step_cells() -> None:
    step = FIXTURES / "lessons" / "hello" / "03-exercise.md"
    done = check(f"{step}::dubble")
    assert done.returncode == 1
    assert f"{step}: no cell 'dubble' in this step: its cells are: cell-1, shout," in done.stdout


def test_check_names_a_missing_step_file_and_what_exists() -> None:
    step = FIXTURES / "lessons" / "hello" / "04-nope.md"
    done = check(str(step))
    assert done.returncode == 1
    assert f"{step}: no such step file: " in done.stdout
    assert "01-where-am-i.md, 02-errors.md, 03-exercise.md" in done.stdout


def test_recording_one_cell_keeps_the_other_records(tmp_path: Path) -> None:
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    record = lesson / "recorded" / "01-where-am-i.json"
    before = json.loads(record.read_text())
    assert set(before) == {"cell-1", "cell-2"}
    done = check(f"{lesson / '01-where-am-i.md'}::cell-2", "--record")
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(json.loads(record.read_text())) == {"cell-1", "cell-2"}


def test_declared_packages_this_python_lacks_are_named_up_front(tmp_path: Path) -> None:
    lesson = tmp_path / "sci"
    lesson.mkdir()
    (lesson / "lesson.yaml").write_text("id: sci\ntitle: S\nchapter: c\npackages: [scipy]\n")
    (lesson / "01-a.md").write_text("---\ntitle: A\n---\n\n```python\nprint(1)\n```\n")
    import importlib.util

    if importlib.util.find_spec("scipy") is not None:
        pytest.skip("this Python has scipy")
    done = check(str(lesson))
    first = done.stdout.splitlines()[0]
    assert first.startswith(
        f"{lesson / 'lesson.yaml'}: warning: scipy is declared but this Python ("
    ), done.stdout
    assert "-m pip install scipy`, or check in Pyodide with `promptdojo check --pyodide`" in first
    assert done.returncode == 0, "a cell that does not import it still passes"


def test_a_wrong_answer_that_passes_fails_the_check_at_its_line() -> None:
    folder = FIXTURES / "checking" / "wrong"
    done = check(str(folder))
    assert done.returncode == 1
    step = f"{folder}/01-double.md"
    assert f"PASSED {step}::1::double-wrong-1 (" in done.stdout
    assert (
        f"{step}:30: cell 'double-wrong-2': the check of exercise 'double' accepts this wrong "
        "answer"
    ) in done.stdout
    assert done.stdout.splitlines()[-1].startswith("3 passed, 2 failed, 0 skipped in ")


def test_check_takes_one_wrong_answer_by_its_id() -> None:
    step = FIXTURES / "checking" / "wrong" / "01-double.md"
    done = check(f"{step}::double-wrong-1")
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].startswith("1 passed, 0 failed, 0 skipped in ")


SHOWN = """---
title: Shown
---

```python
print("tokens: 3")
```

```python {#chart}
class Chart:
    def _repr_svg_(self):
        return "<svg width='40' height='20'><title>Top &amp; tail</title></svg>"


Chart()
```

```python {#quiet}
x = 1
```
"""


def test_show_prints_each_cells_output_and_a_picture_as_its_title_and_size(
    tmp_path: Path,
) -> None:
    lesson = tmp_path / "shown"
    lesson.mkdir()
    (lesson / "lesson.yaml").write_text("id: shown\ntitle: Shown\nchapter: c\n")
    (lesson / "01-shown.md").write_text(SHOWN)
    done = check(str(lesson), "--show")
    assert done.returncode == 0, done.stdout
    step = lesson / "01-shown.md"
    assert (
        f"── {step}:6 cell 'cell-1'\n   tokens: 3\n"
        f"── {step}:10 cell 'chart'\n   [picture: Top & tail, 40×20]\n"
        f"── {step}:19 cell 'quiet'\n"
    ) in done.stdout
    assert "── " not in check(str(lesson)).stdout


def test_a_change_above_a_cell_makes_its_record_stale_too(tmp_path: Path) -> None:
    """A cell's output may depend on any cell above it: changing one marks every record below
    it, each with the command that refreshes it."""
    lesson = tmp_path / "hello"
    shutil.copytree(FIXTURES / "lessons" / "hello", lesson)
    step = lesson / "01-where-am-i.md"
    assert check(str(step), "--record").returncode == 0
    step.write_text(step.read_text().replace("import sys\n", "import sys\n\nanswer = 0\n"))
    done = check(str(step), "--check-outputs")
    assert done.returncode == 1
    assert "output differs" not in done.stdout
    assert (
        f"{step}:8: cell 'cell-1': recorded for an earlier version of this cell: run "
        f"`promptdojo check {step}::cell-1 --record`"
    ) in done.stdout
    assert (
        f"{step}:18: cell 'cell-2': recorded before a cell above it changed: run "
        f"`promptdojo check {step} --record`"
    ) in done.stdout
    assert done.stdout.splitlines()[-1].startswith("2 passed, 0 failed, 0 skipped, 2 stale")
    assert check(str(step), "--record").returncode == 0
    assert check(str(step), "--check-outputs").returncode == 0
