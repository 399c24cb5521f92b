"""Controls bound to a cell: ``slider``, ``choice`` and ``toggle``.

A call declares one control and returns its value::

    from promptdojo.ui import slider
    t = slider("temperature", 0.0, 2.0, value=1.0, step=0.05)

In the browser the cell gets a labelled input under its editor, one per call, in call order;
moving it runs the cell again with the new value. Everywhere else (CPython, ``promptdojo check``,
recorded outputs) each call returns its default ``value``.

The cell kernel and this module meet in the cell's namespace, never by import: before a run the
kernel puts a :class:`ControlRun` under :data:`RUN_KEY` in the namespace (the values the page chose,
already checked to be plain JSON data), and after the run it reads the controls the cell declared.
A value the page chose is checked here against the control (range, step, list), so a bad one
is refused with a message that names the control. Standard library only.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ControlError", "ControlRun", "choice", "slider", "toggle"]

#: Where the kernel puts the current run's :class:`ControlRun` in a cell's namespace.
RUN_KEY = "__promptdojo_controls__"
#: Controls one cell may declare: enough for any sane cell, few enough to catch a loop.
MAX_CONTROLS = 6
#: Steps one slider may have; a finer slider cannot be moved meaningfully by keyboard.
MAX_STEPS = 1000
#: Choices one ``choice`` may offer.
MAX_CHOICES = 20
#: Characters in a control's name or a choice.
MAX_TEXT = 60


class ControlError(ValueError):
    """A control declared wrongly, declared too often, or given a value it does not allow."""


@dataclass
class ControlRun:
    """One run's controls: the values chosen in the page, and the controls the cell declared."""

    values: dict[str, Any] = field(default_factory=dict)
    declared: list[dict[str, Any]] = field(default_factory=list)

    def declare(self, spec: dict[str, Any]) -> Any:
        """Record ``spec`` and return the page's value for it (checked), else its default."""
        name = spec["name"]
        if any(seen["name"] == name for seen in self.declared):
            raise ControlError(
                f"the control {name!r} is made twice in one run: make each control once, at the "
                "top of the cell, never inside a loop or a function called more than once"
            )
        if len(self.declared) >= MAX_CONTROLS:
            raise ControlError(
                f"a cell may make at most {MAX_CONTROLS} controls; this one makes more "
                "(a control made in a loop?): split the cell, or make fewer controls"
            )
        self.declared.append({**spec, "value": spec["default"]})
        if name in self.values:
            # A refused value leaves the control declared at its default: the page shows it so.
            self.declared[-1]["value"] = _checked(spec, self.values[name])
        return self.declared[-1]["value"]


#: A run that collects every call, whoever makes it (:func:`collecting`): for reading a cell's
#: controls without running the cell.
_collector: ControlRun | None = None


@contextmanager
def collecting(run: ControlRun) -> Iterator[ControlRun]:
    """Within the block, every control call declares into ``run``."""
    global _collector
    previous, _collector = _collector, run
    try:
        yield run
    finally:
        _collector = previous


def _current_run() -> ControlRun | None:
    """The run of the cell whose code called us, if a kernel is running one."""
    if _collector is not None:
        return _collector
    frame = sys._getframe(2)
    while frame is not None:
        run = frame.f_globals.get(RUN_KEY)
        if isinstance(run, ControlRun):
            return run
        frame = frame.f_back
    return None


def _declare(spec: dict[str, Any]) -> Any:
    run = _current_run()
    return spec["default"] if run is None else run.declare(spec)


def _name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_TEXT:
        raise ControlError(
            f"a control's name must be text of 1 to {MAX_TEXT} characters, not {name!r}"
        )
    return name


def _number(label: str, what: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
        raise ControlError(f"{label}: {what} must be a finite number, not {x!r}")
    return x


def _on_step(x: float, low: float, step: float) -> bool:
    k = (x - low) / step
    return abs(k - round(k)) <= 1e-6


def _checked(spec: dict[str, Any], value: object) -> Any:
    """``value`` if control ``spec`` allows it; else a :class:`ControlError` saying why."""
    name, kind = spec["name"], spec["kind"]
    refused = f"the control {name!r} refused the value {value!r} (it is back at its default)"
    if kind == "toggle":
        if not isinstance(value, bool):
            raise ControlError(f"{refused}: a toggle is True or False")
        return value
    listed = spec.get("choices", spec.get("values"))
    if listed is not None:
        same_kind = isinstance(value, str) == isinstance(listed[0], str)
        if isinstance(value, bool) or not same_kind or value not in listed:
            raise ControlError(f"{refused}: it must be one of {listed}")
        return listed[listed.index(value)]
    low, high, step = spec["min"], spec["max"], spec["step"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ControlError(f"{refused}: a slider's value is a number")
    if not low <= value <= high:
        raise ControlError(f"{refused}: it must lie between {low} and {high}")
    if not _on_step(value, low, step):
        raise ControlError(f"{refused}: it must be {low} plus a whole number of steps of {step}")
    # Round away float noise from the page (0.1 + 0.2), keeping the type of the bounds.
    snapped = low + round((value - low) / step) * step
    return int(snapped) if spec["integer"] else round(snapped, 12)


def slider(
    name: str,
    min: float | None = None,
    max: float | None = None,
    value: Any = None,
    step: float | None = None,
    *,
    values: list[Any] | None = None,
) -> Any:
    """A slider from ``min`` to ``max`` in steps of ``step``; returns its value.

    ``value`` (the default, ``min`` if omitted) is what CPython and the recorded outputs use.
    With whole-number bounds, default and step (``step`` defaults to 1 then, else to a
    hundredth of the range) the slider returns ``int``.

    With ``values`` instead of ``min`` and ``max``, the slider steps through that list, in its
    order (``values=[1, 2, 4, 8, 16, 32]``: the divisors of 32), and returns one of them, by
    default ``value`` or the first.
    """
    label = f"slider {_name(name)!r}"
    if values is not None:
        return _stepped_slider(label, name, values, value, (min, max, step))
    if min is None or max is None:
        raise ControlError(f"{label}: give min and max, or values=[...]")
    low, high = _number(label, "min", min), _number(label, "max", max)
    if not low < high:
        raise ControlError(f"{label}: min ({low}) must be less than max ({high})")
    default = _number(label, "value", low if value is None else value)
    integer = all(isinstance(x, int) for x in (min, max, default)) and (
        step is None or isinstance(step, int)
    )
    step = _number(label, "step", (1 if integer else (high - low) / 100) if step is None else step)
    if step <= 0 or (high - low) / step > MAX_STEPS:
        raise ControlError(f"{label}: step must be positive, and at most {MAX_STEPS} steps long")
    if not low <= default <= high or not _on_step(default, low, step):
        raise ControlError(
            f"{label}: the default {default} must lie between {low} and {high}, on a step of {step}"
        )
    spec = {"kind": "slider", "name": name, "min": low, "max": high, "step": step}
    return _declare({**spec, "default": default, "integer": integer})


def _options(label: str, options: object, what: str, limit: int) -> list[Any]:
    """``options`` as a list of 2 to ``limit`` distinct texts, or of distinct numbers."""
    options = list(options) if isinstance(options, list | tuple) else []
    texts = all(isinstance(o, str) and 0 < len(o) <= MAX_TEXT for o in options)
    numbers = all(
        isinstance(o, int | float) and not isinstance(o, bool) and math.isfinite(o) for o in options
    )
    if not 1 <= len(options) <= limit or not (texts or numbers):
        raise ControlError(f"{label}: {what} must be 1 to {limit} texts, or 1 to {limit} numbers")
    if len(set(options)) != len(options):
        raise ControlError(f"{label}: {what} must be distinct")
    return options


def _stepped_slider(label: str, name: str, values: object, value: Any, others: tuple) -> Any:
    if any(x is not None for x in others):
        raise ControlError(f"{label}: give values=[...], or min, max and step, not both")
    values = _options(label, values, "values", MAX_STEPS)
    default = values[0] if value is None else value
    if default not in values:
        raise ControlError(f"{label}: the default {default!r} is not one of {values}")
    return _declare({"kind": "slider", "name": name, "values": values, "default": default})


def choice(name: str, options: list[Any], value: Any = None) -> Any:
    """A drop-down of ``options`` (texts, or numbers such as ``[8, 16, 32]``): returns the
    chosen one, by default ``value`` or the first."""
    label = f"choice {_name(name)!r}"
    options = _options(label, options, "options", MAX_CHOICES)
    default = options[0] if value is None else value
    if default not in options:
        raise ControlError(f"{label}: the default {default!r} is not one of {options}")
    return _declare({"kind": "choice", "name": name, "choices": options, "default": default})


def toggle(name: str, value: bool = False) -> bool:
    """A checkbox; returns ``True`` when ticked, by default ``value``."""
    label = f"toggle {_name(name)!r}"
    if not isinstance(value, bool):
        raise ControlError(f"{label}: the default must be True or False, not {value!r}")
    return _declare({"kind": "toggle", "name": name, "default": value})
