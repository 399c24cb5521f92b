"""The complete example in docs/authoring.md is a real lesson: it parses, and its cells run."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from promptdojo.course import load_lesson
from promptdojo.decoding import top_p_filter
from promptdojo.kernel import Kernel
from tests.conftest import ROOT

DOC = (ROOT / "docs" / "authoring.md").read_text()


def example_lesson(tmp_path: Path) -> Path:
    section = DOC.split("## A complete example", 1)[1]
    step = re.search(r"````markdown\n(.*?)\n````", section, re.S)
    meta = re.search(r"```yaml\n(.*?)\n```", DOC, re.S)
    assert step is not None
    assert meta is not None
    folder = tmp_path / "top-p-sampling"
    folder.mkdir()
    (folder / "lesson.yaml").write_text(meta.group(1))
    (folder / "01-the-nucleus.md").write_text(step.group(1) + "\n")
    return folder


def test_the_documented_example_parses(tmp_path: Path) -> None:
    lesson = load_lesson(example_lesson(tmp_path))
    step = lesson.steps[0]
    assert lesson.packages == ("numpy",)
    assert [c.id for c in step.cells] == ["show", "bad-p", "count"]
    (exercise,) = step.exercises
    assert len(exercise.hints) == 2
    assert exercise.solution is not None


def test_the_documented_solution_passes_its_check_and_the_starter_does_not(
    tmp_path: Path,
) -> None:
    step = load_lesson(example_lesson(tmp_path)).steps[0]
    (exercise,) = step.exercises
    assert int(np.isfinite(top_p_filter(np.log([0.5, 0.3, 0.15, 0.05]), p=0.9)).sum()) == 3
    for code, should_pass in ((exercise.solution.code, True), (exercise.starter.code, False)):
        kernel = Kernel()
        for cell in (*step.setup, step.cells[0]):
            assert kernel.run(cell.code).ok
        assert kernel.run(step.cells[1].code).error_type == "ValueError"
        assert kernel.run(code).ok
        assert kernel.run(exercise.check.code).ok is should_pass


def test_the_documented_wrong_answers_meet_their_messages(tmp_path: Path) -> None:
    from promptdojo.checking.judge import StepRunner
    from promptdojo.checking.outcome import Status

    lesson = load_lesson(example_lesson(tmp_path))
    outcomes = StepRunner(lesson.steps[0]).run()
    wrong = [o for o in outcomes if "-wrong-" in o.cell_id]
    assert [o.cell_id for o in wrong] == ["count-wrong-1", "count-wrong-2", "count-wrong-3"]
    assert all(o.status is Status.PASSED for o in outcomes), outcomes
