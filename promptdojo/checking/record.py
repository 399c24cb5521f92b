"""Recorded outputs: what every cell printed and showed, kept next to the lesson.

``promptdojo check --record`` writes ``<lesson>/recorded/<step>.json``; the server shows these
outputs until the learner's Python is ready, and ``--check-outputs`` fails when a cell's output
drifts from its record.
"""

from __future__ import annotations

import difflib
import json
import re
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


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _is_noise(before: str, after: str) -> bool:
    """Two printed numbers that differ only as rounding does: tiny, or equal to 6 digits."""
    a, b = float(before), float(after)
    return max(abs(a), abs(b)) < 1e-9 or abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def noise_hint(diff: str) -> str:
    """Advice when a drift is only floating-point noise, which differs between platforms.

    The last digits of a float sum depend on the order of operations, and so on the BLAS, the
    CPU and the runtime: CPython and Pyodide print different noise for the same computation.
    """
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and line[1:2] != "-"]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and line[1:2] != "+"]
    if not removed or len(removed) != len(added):
        return ""
    pairs = []
    for old, new in zip(removed, added, strict=True):
        if _NUMBER.sub("#", old) != _NUMBER.sub("#", new):
            return ""
        pairs += [
            (x, y)
            for x, y in zip(_NUMBER.findall(old), _NUMBER.findall(new), strict=True)
            if x != y
        ]
    if not pairs or not all(_is_noise(x, y) for x, y in pairs):
        return ""
    x, y = pairs[0]
    return (
        f"hint: only floating-point noise differs ({x} → {y}); such digits change between "
        'CPython and Pyodide and between machines. Print a rounded value (f"{x:.3g}") or the '
        "comparison (np.allclose(a, b), error < 1e-9), not the raw number."
    )
