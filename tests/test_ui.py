"""promptdojo.ui: each control returns its default outside the page; the kernel passes the page's
values, checked; `check` records the defaults."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from promptdojo.kernel import Kernel
from promptdojo.ui import MAX_CONTROLS, ControlError, choice, slider, toggle
from tests.conftest import ROOT

CELL = """from promptdojo.ui import choice, slider, toggle
t = slider("temperature", 0.0, 2.0, value=1.0, step=0.05)
k = slider("k", 1, 50, value=5)
m = choice("model", ["Llama-3.1-8B", "Mistral-7B"], value="Mistral-7B")
on = toggle("group", value=True)
print(t, k, m, on)
"""


def test_outside_a_kernel_each_call_returns_its_default() -> None:
    assert slider("temperature", 0.0, 2.0, value=1.0, step=0.05) == 1.0
    assert slider("k", 1, 50, value=5) == 5
    assert isinstance(slider("k", 1, 50, value=5), int)
    assert slider("x", 0.0, 1.0) == 0.0
    assert choice("model", ["a", "b"]) == "a"
    assert choice("model", ["a", "b"], value="b") == "b"
    assert toggle("on") is False


def test_a_kernel_run_without_values_uses_the_defaults_and_reports_the_controls() -> None:
    result = Kernel().run(CELL)
    assert result.ok
    assert [(c["kind"], c["name"], c["value"]) for c in result.controls] == [
        ("slider", "temperature", 1.0),
        ("slider", "k", 5),
        ("choice", "model", "Mistral-7B"),
        ("toggle", "group", True),
    ]
    assert result.to_dict()["controls"][0]["step"] == 0.05


def test_the_pages_values_reach_the_cell_and_unknown_names_are_ignored() -> None:
    kernel = Kernel()
    values = {"temperature": 0.30000000000000004, "k": 7, "gone": 1, "group": False}
    result = kernel.run(CELL + "print(repr(t))", controls=json.dumps(values))
    assert result.ok, result.traceback
    assert kernel.namespace("default")["t"] == 0.3
    assert kernel.namespace("default")["k"] == 7
    assert "__promptdojo_controls__" not in kernel.namespace("default")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"temperature": 2.5}, "must lie between 0.0 and 2.0"),
        ({"temperature": 0.33}, "whole number of steps of 0.05"),
        ({"model": "GPT-5"}, "must be one of ['Llama-3.1-8B', 'Mistral-7B']"),
        ({"group": 1}, "a toggle is True or False"),
        ({"k": "7"}, "a slider's value is a number"),
        ({"temperature": {"code": "__import__('os')"}}, "a control's value is True/False"),
        ("not json", "not JSON"),
    ],
)
def test_a_bad_value_is_refused_with_a_message_naming_the_control(values, message) -> None:
    raw = values if isinstance(values, str) else json.dumps(values)
    result = Kernel().run(CELL, controls=raw)
    assert not result.ok
    assert result.error_type == "ControlError"
    assert message in result.error_message


def test_a_control_in_a_loop_or_too_many_controls_is_an_error() -> None:
    loop = Kernel().run(
        "from promptdojo.ui import slider\nfor _ in range(3):\n    slider('t', 0, 1)"
    )
    assert loop.error_type == "ControlError"
    assert "made twice in one run" in loop.error_message
    assert loop.error_line == 3
    many = "from promptdojo.ui import slider\nfor i in range(20):\n    slider(f't{i}', 0, 1)"
    result = Kernel().run(many)
    assert f"at most {MAX_CONTROLS} controls" in result.error_message


@pytest.mark.parametrize(
    "call",
    [
        "slider('t', 0.0, 2.0, value=3.0)",
        "slider('t', 0.0, 1.0, value=0.33, step=0.1)",
        "slider('t', 2, 1)",
        "slider('t', 0, 1, step=0)",
        "choice('m', ['a'], value='b')",
        "choice('m', [])",
        "toggle('x', value=1)",
        "slider('', 0, 1)",
    ],
)
def test_a_badly_declared_control_says_what_is_wrong(call: str) -> None:
    with pytest.raises(ControlError):
        eval(call, {"slider": slider, "choice": choice, "toggle": toggle})


def test_check_records_the_defaults(tmp_path: Path) -> None:
    lesson = tmp_path / "knobs"
    shutil.copytree(ROOT / "tests" / "fixtures" / "lessons" / "knobs", lesson)
    shutil.rmtree(lesson / "recorded")
    done = subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", str(lesson), "--record"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    recorded = json.loads((lesson / "recorded" / "01-knobs.json").read_text())
    assert recorded["temp"]["stdout"] == "T=1.00 model=small\n"
    assert recorded["later"]["stdout"] == "later sees T=1.00\n"
    assert recorded["slow"]["stdout"] == "v=0\n"


def test_a_choice_of_numbers_and_a_slider_through_values_return_the_numbers() -> None:
    code = (
        "from promptdojo.ui import choice, slider\n"
        "bits = choice('bits', [4, 8, 16], value=8)\n"
        "group = slider('group size', values=[1, 2, 4, 8, 16, 32], value=4)\n"
        "(bits, group)"
    )
    kernel = Kernel()
    ran = kernel.run(code, controls={"bits": 16, "group size": 32})
    assert ran.value["text/plain"] == "(16, 32)"
    specs = {c["name"]: c for c in ran.controls}
    assert specs["bits"]["choices"] == [4, 8, 16]
    assert specs["group size"]["values"] == [1, 2, 4, 8, 16, 32]
    for refused in ({"bits": "16"}, {"group size": 3}, {"bits": True}):
        result = kernel.run(code, controls=refused)
        assert result.error_type == "ControlError", refused
    with pytest.raises(ControlError, match="give values"):
        slider("x", 0, 10, values=[1, 2])
    with pytest.raises(ControlError, match="texts, or 1 to 20 numbers"):
        choice("mixed", ["a", 1])
