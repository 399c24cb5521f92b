"""Recorded outputs: what every cell printed and showed, kept next to the lesson.

``promptdojo check --record`` writes ``<lesson>/recorded/<step>.json``; the server shows these
outputs until the learner's Python is ready, and ``--check-outputs`` fails when a cell's output
drifts from its record. This module owns the files and how two outputs compare;
:mod:`promptdojo.checking.record` fills them from a check run.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from pathlib import Path

from promptdojo.course.model import Step

RECORD_DIR = "recorded"
#: The key of a record that holds :func:`code_hash` of the code that produced it.
CODE_KEY = "code"


def code_hash(code: str) -> str:
    """A short hash of a cell's code: a record made from other code is stale, and the browser
    notices when the author changed starter code a learner had edited."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


def is_stale(record: dict, code: str) -> bool:
    """Whether ``record`` was made from other code than ``code`` (or before hashes were kept)."""
    return record.get(CODE_KEY) != code_hash(code)


def refresh_command(path: object, cell_id: str) -> str:
    """The command that re-records one cell."""
    return f"promptdojo check {path}::{cell_id} --record"


def record_path(step: Step) -> Path:
    """Where ``step``'s recorded outputs live."""
    return step.path.parent / RECORD_DIR / f"{step.path.stem}.json"


def load_records(step: Step) -> dict[str, dict]:
    """``{cell_id: {"stdout", "stderr", "value", "error"?, "code"}}`` for ``step``; empty if none.

    ``error`` is the traceback a cell expected to raise shows learners; ``code`` is the
    :func:`code_hash` of the code that produced the record.
    """
    path = record_path(step)
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _as_text(output: dict) -> list[str]:
    lines = []
    for name in ("stdout", "stderr", "error"):
        if output.get(name):
            lines += [f"[{name}] {line}" for line in output[name].splitlines()]
    for mime, text in sorted(output.get("value", {}).items()):
        lines += [f"[{mime}] {line}" for line in str(text).splitlines()]
    return lines


def output_diff(recorded: dict, now: dict) -> str:
    """A unified diff of a cell's recorded output against ``now``; empty when they agree."""
    before, after = _as_text(recorded), _as_text(now)
    if before == after:
        return ""
    return "\n".join(difflib.unified_diff(before, after, "recorded", "now", lineterm=""))


def write_step_records(step: Step, outputs: dict[str, dict]) -> Path:
    """Write ``{cell_id: output}`` as ``step``'s record; return the file written."""
    path = record_path(step)
    path.parent.mkdir(exist_ok=True)
    text = json.dumps(outputs, indent=1, sort_keys=True, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


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
