"""A step survives the trip to a step process as JSON: the cells, setup and exercises it runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptdojo.checking.serialize import cell_from_dict, cell_to_dict, step_from_dict, step_to_dict
from promptdojo.course import load_lesson
from tests.conftest import FIXTURE_LESSONS, ROOT

LESSONS = [
    FIXTURE_LESSONS / "hello",
    FIXTURE_LESSONS / "runtime",
    ROOT / "tests" / "fixtures" / "checking" / "exercises",
]


@pytest.mark.parametrize("folder", LESSONS, ids=lambda p: p.name)
def test_every_step_round_trips_through_json(folder: Path) -> None:
    for step in load_lesson(folder).steps:
        back = step_from_dict(json.loads(json.dumps(step_to_dict(step))))
        assert (back.number, back.slug, back.title, back.path) == (
            step.number,
            step.slug,
            step.title,
            step.path,
        )
        assert back.cells == step.cells
        assert back.setup == step.setup
        for exercise in step.exercises:
            got = back.exercise(exercise.id)
            assert got is not None
            assert (got.starter, got.check, got.solution) == (
                exercise.starter,
                exercise.check,
                exercise.solution,
            )


def test_prose_and_hints_stay_behind() -> None:
    step = load_lesson(ROOT / "tests" / "fixtures" / "checking" / "exercises").steps[0]
    data = step_to_dict(step)
    assert "parts" not in data
    assert all("hints" not in e for e in data["exercises"])
    back = step_from_dict(data)
    assert all(not e.hints for e in back.exercises)


def test_a_cell_keeps_its_place_and_attributes() -> None:
    for step in load_lesson(FIXTURE_LESSONS / "hello").steps:
        for cell in (*step.setup, *step.cells):
            assert cell_from_dict(cell_to_dict(cell)) == cell
