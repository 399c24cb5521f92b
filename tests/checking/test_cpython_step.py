"""The CPython step process: its result file grows with the step, once per cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptdojo.checking.backends import cpython_step
from promptdojo.checking.backends.process import json_lines
from promptdojo.checking.serialize import step_to_dict
from promptdojo.course import load_lesson


def many_cells(folder: Path, count: int) -> Path:
    """A lesson whose one step has ``count`` small cells."""
    folder.mkdir()
    (folder / "lesson.yaml").write_text('id: many\ntitle: Many\nchapter: "ch 0"\n')
    cells = "".join(f"```python\nx{i} = {i}\nprint(x{i})\n```\n\n" for i in range(count))
    (folder / "01-many.md").write_text(f"---\ntitle: Many\n---\n\n# Many\n\n{cells}")
    return folder


def written_bytes() -> int:
    """Bytes this process has written so far (Linux's ``/proc/self/io``)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def run_step(tmp_path: Path, count: int) -> tuple[int, list]:
    """Bytes written while the step process judges ``count`` cells, and what it reported."""
    lesson = load_lesson(many_cells(tmp_path / f"many-{count}", count))
    job, result = tmp_path / f"job-{count}.json", tmp_path / f"result-{count}.jsonl"
    job.write_text(json.dumps({"step": step_to_dict(lesson.steps[0]), "time_limit": 10}))
    before = written_bytes()
    cpython_step.main([str(job), str(result)])
    return written_bytes() - before, json_lines(result.read_text(encoding="utf-8"))


@pytest.mark.skipif(not Path("/proc/self/io").is_file(), reason="counts writes in /proc/self/io")
def test_each_outcome_is_written_once_so_the_step_is_linear_in_its_cells(tmp_path: Path) -> None:
    run_step(tmp_path, 5)  # imports done, so only the step's own writes count below
    small, outcomes = run_step(tmp_path, 300)
    large, _ = run_step(tmp_path, 1200)
    # Four times the cells: about four times the bytes (rewriting every outcome after each
    # cell wrote about sixteen times as many).
    assert large < 5 * small, (small, large)
    assert [o["output"]["stdout"] for o in outcomes[:3]] == ["0\n", "1\n", "2\n"]
    assert len(outcomes) == 300


def test_a_line_cut_short_by_a_crash_is_left_out() -> None:
    assert json_lines('{"a": 1}\n{"b": 2}\n{"c"') == [{"a": 1}, {"b": 2}]
    assert json_lines("") == []
