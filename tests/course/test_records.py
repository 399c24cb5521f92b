"""Recorded outputs: the file next to the lesson, and how two outputs compare."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from promptdojo.course import Location, load_lesson
from promptdojo.course.records import (
    load_records,
    noise_hint,
    output_diff,
    read_records,
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


BAD_SHAPES = {
    # the file's text → (line of the problem, words of the message)
    "[]\n": (1, "the record is in the wrong shape: Input should be a valid dictionary"),
    '{\n "cell-1": {\n  "stdout": "hi\\n",\n  "value": "42"\n }\n}\n': (
        4,
        "the record is in the wrong shape at cell-1/value: Input should be a valid dictionary",
    ),
    '{\n "cell-1": []\n}\n': (2, "wrong shape at cell-1: Input should be a valid dictionary"),
    '{"cell-1": {"value": {"text/plain": 3}}}': (1, "at cell-1/value/text/plain"),
    '{\n "cell-1": {\n  "stdout": 7\n }\n}\n': (3, "at cell-1/stdout: Input should be"),
    '{\n "cell-1": {}\n,}\n': (3, "the record is not valid JSON (Expecting property name"),
    "[" * 100_000 + "]" * 100_000: (1, "the record cannot be read"),
}


@pytest.mark.parametrize("text", list(BAD_SHAPES), ids=range(len(BAD_SHAPES)))
def test_a_record_in_the_wrong_shape_is_reported_at_its_line_and_counts_as_none(
    tmp_path: Path, text: str
) -> None:
    step = _step(tmp_path)
    record_path(step).parent.mkdir()
    record_path(step).write_text(text, encoding="utf-8")
    assert load_records(step) == {}
    found = read_records(step)
    line, words = BAD_SHAPES[text]
    assert found.records == {}
    assert found.problem is not None
    assert found.problem.location == Location(record_path(step), line)
    assert words in found.problem.message
    assert found.problem.message.endswith("its outputs are ignored")
    assert f"promptdojo check {step.path} --record" in found.problem.hint
    assert not found.conflict


def test_merge_conflict_markers_name_the_file_and_their_line(tmp_path: Path) -> None:
    step = _step(tmp_path)
    record_path(step).parent.mkdir()
    record_path(step).write_text(
        '{\n<<<<<<< HEAD\n "cell-1": {"stdout": "a"}\n=======\n "cell-1": {"stdout": "b"}\n'
        ">>>>>>> other\n}\n"
    )
    found = read_records(step)
    assert found.records == {}
    assert found.conflict
    assert str(found.problem).startswith(
        f"{record_path(step)}:2: the record has merge-conflict markers (<<<<<<< HEAD)"
    )
    assert f"resolve the conflict in {record_path(step).name}" in found.problem.hint


def test_a_good_record_reads_as_the_schema_says(tmp_path: Path) -> None:
    step = _step(tmp_path)
    record_path(step).parent.mkdir()
    record_path(step).write_text(
        '\ufeff{"cell-1": {"stdout": "hi\\n", "value": {"text/plain": "3"}, "extra": 1}}'
    )
    found = read_records(step)
    assert found.problem is None
    # Missing keys get their empty defaults, unknown keys are dropped, a BOM is no matter.
    assert found.records == {
        "cell-1": {"stdout": "hi\n", "stderr": "", "value": {"text/plain": "3"}}
    }
