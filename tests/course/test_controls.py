"""Controls read from a cell's source: validate reports a bad default at FILE:LINE."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from fastapi.testclient import TestClient

from promptdojo.course import load_lesson
from promptdojo.course.controls import declared_controls
from promptdojo.course.validate import validate
from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings
from tests.conftest import ROOT

KNOBS = ROOT / "tests" / "fixtures" / "lessons" / "knobs"


def test_literal_calls_are_read_in_order_and_computed_ones_skipped() -> None:
    code = (
        "from promptdojo import ui\n"
        "from promptdojo.ui import choice, slider\n"
        "m = choice('model', ['a', 'b'], value='b')\n"
        "t = ui.slider('temperature', 0.0, 2.0, value=1.0, step=0.05)\n"
        "n = slider('n', 0, top)\n"
    )
    specs, problems = declared_controls(code)
    assert problems == []
    assert [(s["name"], s["default"]) for s in specs] == [("model", "b"), ("temperature", 1.0)]


def test_code_that_does_not_use_promptdojo_ui_declares_nothing() -> None:
    assert declared_controls("slider('t', 0, 1, value=5)") == ([], [])


def test_validate_reports_a_default_outside_its_range_at_its_line(tmp_path: Path) -> None:
    lesson = tmp_path / "knobs"
    shutil.copytree(KNOBS, lesson)
    step = lesson / "01-knobs.md"
    text = step.read_text()
    step.write_text(text.replace("value=1.0, step=0.05", "value=2.5, step=0.05"))
    line = next(i for i, row in enumerate(step.read_text().splitlines(), 1) if "value=2.5" in row)
    result = validate([lesson])
    messages = [str(d) for d in result.diagnostics]
    assert len(messages) == 1, messages
    assert messages[0].startswith(f"{step}:{line}: cell 'temp': slider 'temperature': the default")
    assert "must lie between 0.0 and 2.0" in messages[0]


def test_validate_reports_a_bad_choice_and_a_repeated_name(tmp_path: Path) -> None:
    lesson = tmp_path / "knobs"
    shutil.copytree(KNOBS, lesson)
    step = lesson / "01-knobs.md"
    text = step.read_text()
    text = text.replace('value="small")', 'value="medium")')
    text = text.replace('toggle("loud")', 'toggle("temperature")')
    step.write_text(text)
    messages = [str(d) for d in validate([lesson]).diagnostics]
    assert any("the default 'medium' is not one of ['small', 'large']" in m for m in messages)
    assert any("the control 'temperature' is made twice" in m for m in messages), messages


def test_the_parser_keeps_each_cells_controls_and_the_page_draws_those(tmp_path: Path) -> None:
    """Read once, by the parser: the step page's data holds the model's controls, so the page
    and validation never read a cell's code two ways."""
    lesson = load_lesson(KNOBS)
    cells = {c.id: c for c in lesson.steps[0].cells}
    assert [s["name"] for s in cells["temp"].controls] == ["temperature", "model", "loud"]
    assert all(not c.controls for c in cells.values() if "promptdojo" not in c.code)
    settings = Settings(lessons_dir=KNOBS.parent, package_cache_dir=tmp_path / "pkgs")
    with TestClient(create_app(settings)) as client:
        text = client.get(f"/lessons/{lesson.id}/1", headers={"accept": "text/html"}).text
    data = json.loads(re.search(r'id="step-data">(.*?)</script>', text).group(1))
    assert data["controls"] == {c.id: list(c.controls) for c in cells.values() if c.controls}
    assert data["controls"], "the fixture declares controls"
