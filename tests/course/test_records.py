"""Recorded outputs: the file next to the lesson, and how two outputs compare."""

from __future__ import annotations

import shutil
from pathlib import Path

from promptdojo.course import load_lesson
from promptdojo.course.records import (
    load_records,
    noise_hint,
    output_diff,
    record_path,
    write_step_records,
)
from tests.conftest import FIXTURE_LESSONS


def _step(tmp_path: Path):
    folder = tmp_path / "hello"
    shutil.copytree(FIXTURE_LESSONS / "hello", folder)
    shutil.rmtree(folder / "recorded")
    return load_lesson(folder).steps[0]


def test_records_live_next_to_the_lesson(tmp_path: Path) -> None:
    step = _step(tmp_path)
    assert record_path(step) == step.path.parent / "recorded" / f"{step.path.stem}.json"


def test_written_records_read_back(tmp_path: Path) -> None:
    step = _step(tmp_path)
    assert load_records(step) == {}
    outputs = {"cell-1": {"stdout": "hi\n", "stderr": "", "value": {"text/plain": "3"}}}
    path = write_step_records(step, outputs)
    assert path == record_path(step)
    assert load_records(step) == outputs


def test_an_unreadable_record_counts_as_none(tmp_path: Path) -> None:
    step = _step(tmp_path)
    record_path(step).parent.mkdir()
    record_path(step).write_text("{not json")
    assert load_records(step) == {}


def test_equal_outputs_have_no_diff_and_changed_ones_do() -> None:
    before = {"stdout": "a\nb\n", "value": {"text/plain": "1"}}
    assert output_diff(before, dict(before)) == ""
    diff = output_diff(before, {"stdout": "a\nc\n", "value": {"text/plain": "1"}})
    assert "-[stdout] b" in diff
    assert "+[stdout] c" in diff
    assert noise_hint(diff) == ""


def test_float_noise_gets_a_hint() -> None:
    diff = output_diff({"stdout": "0.30000000000000004\n"}, {"stdout": "0.3\n"})
    assert noise_hint(diff).startswith("hint: only floating-point noise differs")
