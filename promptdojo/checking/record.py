"""Recorded outputs: what every cell printed and showed, kept next to the lesson.

``promptdojo check --record`` writes ``<lesson>/recorded/<step>.json``; the server shows these
outputs until the learner's Python is ready, and ``--check-outputs`` fails when a cell's output
drifts from its record.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from promptdojo.checking.runner import CheckResult, StepResult
from promptdojo.checking.steprun import Status
from promptdojo.course.model import Step

RECORD_DIR = "recorded"


def record_path(step: Step) -> Path:
    """Where ``step``'s recorded outputs live."""
    return step.path.parent / RECORD_DIR / f"{step.path.stem}.json"


def load_records(step: Step) -> dict[str, dict]:
    """``{cell_id: {"stdout", "stderr", "value"}}`` for ``step``, empty if never recorded."""
    path = record_path(step)
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _visible(step_result: StepResult) -> dict[str, dict]:
    visible = {c.id for c in step_result.step.cells}
    return {
        o.cell_id: o.output.to_dict()
        for o in step_result.outcomes
        if o.cell_id in visible and o.status is Status.PASSED
    }


def write_records(result: CheckResult) -> list[Path]:
    """Write every step's outputs; return the files written."""
    written = []
    for step_result in result.steps:
        path = record_path(step_result.step)
        path.parent.mkdir(exist_ok=True)
        text = json.dumps(_visible(step_result), indent=1, sort_keys=True, ensure_ascii=False)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(path)
    return written


def _as_text(output: dict) -> list[str]:
    lines = []
    for name in ("stdout", "stderr"):
        if output.get(name):
            lines += [f"[{name}] {line}" for line in output[name].splitlines()]
    for mime, text in sorted(output.get("value", {}).items()):
        lines += [f"[{mime}] {line}" for line in str(text).splitlines()]
    return lines


def drift(result: CheckResult) -> list[tuple[str, str, str]]:
    """``(file:line, cell id, unified diff)`` for every passed cell whose output changed."""
    changes = []
    for step_result in result.steps:
        recorded = load_records(step_result.step)
        current = _visible(step_result)
        by_id = {o.cell_id: o for o in step_result.outcomes}
        for cell_id, output in current.items():
            where = f"{by_id[cell_id].path}:{by_id[cell_id].line}"
            if cell_id not in recorded:
                changes.append(
                    (where, cell_id, "no recorded output: run `promptdojo check --record`")
                )
                continue
            before, after = _as_text(recorded[cell_id]), _as_text(output)
            if before != after:
                diff = difflib.unified_diff(before, after, "recorded", "now", lineterm="")
                changes.append((where, cell_id, "\n".join(diff)))
    return changes
