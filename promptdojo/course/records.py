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
from collections.abc import Callable
from dataclasses import dataclass, field
from json.decoder import JSONObject
from json.scanner import py_make_scanner
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from promptdojo.course.model import Diagnostic, Location, Step
from promptdojo.course.problems import decode_text, is_lesson_file

RECORD_DIR = "recorded"
#: The key of a record that holds :func:`code_hash` of the code that produced it.
CODE_KEY = "code"


def code_hash(code: str) -> str:
    """A short hash of a cell's code: a record made from other code is stale, and the browser
    notices when the author changed starter code a learner had edited."""
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


#: The key of a record that holds :func:`above_hashes`' hash of the code above its cell.
ABOVE_KEY = "above"
#: Why a record is stale, as the page and ``--check-outputs`` say it.
STALE_CELL = "recorded for an earlier version of this cell"
STALE_ABOVE = "recorded before a cell above it changed"


def is_stale(record: dict, code: str) -> bool:
    """Whether ``record`` was made from other code than ``code`` (or before hashes were kept)."""
    return record.get(CODE_KEY) != code_hash(code)


def above_hashes(step: Step) -> dict[str, str]:
    """For each visible cell, a hash of the code that runs before it in its step: the setup
    cells, the cells above it, and their exercises' checks and solutions (wrong answers leave
    no trace, and hints are prose)."""
    parts = [cell.code for cell in step.setup]
    hashes = {}
    for cell in step.cells:
        hashes[cell.id] = code_hash("\0".join(parts))
        parts.append(cell.code)
        exercise = step.exercise(cell.id)
        if exercise is not None:
            parts += [exercise.check.code] + ([exercise.solution.code] if exercise.solution else [])
    return hashes


def stale_records(step: Step, records: dict[str, dict]) -> dict[str, str]:
    """Why each visible cell's record is stale, by cell id: its own code changed
    (:data:`STALE_CELL`), or code above it in the step did (:data:`STALE_ABOVE`), which may
    change what it prints. A record without the hash of the code above is judged by its own."""
    above = above_hashes(step)
    found = {}
    for cell in step.cells:
        record = records.get(cell.id)
        if record is None:
            continue
        if is_stale(record, cell.code):
            found[cell.id] = STALE_CELL
        elif record.get(ABOVE_KEY) not in (None, above[cell.id]):
            found[cell.id] = STALE_ABOVE
    return found


def refresh_command(path: object, cell_id: str | None = None) -> str:
    """The command that re-records one cell (or, without ``cell_id``, a whole step)."""
    return f"promptdojo check {path}{f'::{cell_id}' if cell_id else ''} --record"


def record_path(step: Step) -> Path:
    """Where ``step``'s recorded outputs live."""
    return step.path.parent / RECORD_DIR / f"{step.path.stem}.json"


class CellRecord(BaseModel):
    """What one cell printed and showed, as a record file holds it (see :func:`load_records`).

    Only this shape reaches the page and the output checks: a record file in any other shape
    is reported and treated as missing.
    """

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    stdout: str = ""
    stderr: str = ""
    #: The cell's value by MIME type (``text/plain``, ``text/html``, ``image/svg+xml``).
    value: dict[str, str] = Field(default_factory=dict)
    #: The traceback of a cell expected to raise.
    error: str | None = None
    #: :func:`code_hash` of the code that produced the record.
    code: str | None = None
    #: :func:`above_hashes`' hash of the code that ran before the cell in its step.
    above: str | None = None
    #: The output cap, when ``check`` cut the cell's stdout and stderr there.
    truncated: int | None = None


_SCHEMA = TypeAdapter(dict[str, CellRecord])
#: A line a merge leaves where both sides changed: ``<<<<<<< HEAD``, ``=======``, ``>>>>>>> x``.
_CONFLICT = re.compile(r"^(?:<{7}|={7}|>{7}|\|{7})(?: .*)?$", re.MULTILINE)


#: What every conflict marker holds: the pattern is tried only on a text holding one of these.
_MARKS = ("<" * 7, "=" * 7, ">" * 7, "|" * 7)


def _conflict(text: str) -> re.Match | None:
    """The first merge-conflict marker line of ``text``: the pattern tries each line's start,
    which costs a record of a thousand lines a third of its reading; most hold no marker."""
    if not any(mark in text for mark in _MARKS):
        return None
    return _CONFLICT.search(text)


@dataclass(frozen=True)
class RecordFile:
    """A step's record file as read: its records, or the problem that leaves it unused."""

    path: Path
    records: dict[str, dict] = field(default_factory=dict)
    #: Why the file's records are not used (they count as missing), at its line; else ``None``.
    problem: Diagnostic | None = None
    #: The problem is a merge's conflict markers: work a merge left undone.
    conflict: bool = False


def read_records(step: Step) -> RecordFile:
    """``step``'s record file, checked against :class:`CellRecord`; never raises.

    A file that is not JSON, has merge-conflict markers, or holds another shape (``[]``,
    ``"value": "..."``) has its problem at FILE:LINE and no records: the step shows no recorded
    outputs, and ``--check-outputs`` finds them missing, until ``check --record`` rewrites it.
    """
    path = record_path(step)
    if not path.exists():
        return RecordFile(path)
    fix = f"run `promptdojo check {step.path} --record` to write it again"

    def broken(line: int, message: str, hint: str = fix, conflict: bool = False) -> RecordFile:
        problem = Diagnostic(Location(path, line), message, hint)
        return RecordFile(path, problem=problem, conflict=conflict)

    if not is_lesson_file(path):
        return broken(1, "the record is not a regular file: its outputs are ignored", fix)
    try:
        text = decode_text(path.read_bytes())
    except (OSError, UnicodeDecodeError) as exc:
        return broken(1, f"cannot read the record ({exc}): its outputs are ignored")
    conflict = _conflict(text)
    if conflict is not None:
        line = text.count("\n", 0, conflict.start()) + 1
        return broken(
            line,
            f"the record has merge-conflict markers ({conflict.group()[:40].strip()}): its outputs "
            "are ignored",
            f"resolve the conflict in {path.name}, or {fix}",
            conflict=True,
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return broken(
            exc.lineno, f"the record is not valid JSON ({exc.msg}): its outputs are ignored"
        )
    except (RecursionError, ValueError) as exc:
        return broken(1, f"the record cannot be read ({exc}): its outputs are ignored")
    try:
        records = _SCHEMA.validate_python(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = "/".join(str(part) for part in error["loc"])
        where = f" at {where}" if where else ""
        return broken(
            _line_of(text, error["loc"]),
            f"the record is in the wrong shape{where}: {error['msg']}: its outputs are ignored",
            'a record maps each cell id to {"stdout": text, "stderr": text, "value": {MIME '
            f'type: text}}, "code": hash}}; {fix}',
        )
    return RecordFile(path, {key: r.model_dump(exclude_none=True) for key, r in records.items()})


def load_records(step: Step) -> dict[str, dict]:
    """``{cell_id: {"stdout", "stderr", "value", "error"?, "code"?}}`` for ``step``; empty if
    none, or if the file is not a valid record (:func:`read_records` says why).

    ``error`` is the traceback a cell expected to raise shows learners; ``code`` is the
    :func:`code_hash` of the code that produced the record.
    """
    return read_records(step).records


class _Located(dict):
    """A JSON object that knows where in the text each of its values starts."""

    starts: dict[str, int]


def _line_of(text: str, loc: tuple) -> int:
    """The line of the key at ``loc`` (a JSON path) in ``text``, or of the nearest key above it;
    1 for the file as a whole."""
    decoder = json.JSONDecoder()

    def parse_object(
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: Callable[[str, int], tuple[Any, int]],
        object_hook: object,
        pairs_hook: object,
        memo: dict | None = None,
    ) -> tuple[_Located, int]:
        starts: list[int] = []

        def scan(string: str, index: int) -> tuple[Any, int]:
            starts.append(index)
            return scan_once(string, index)

        pairs, end = JSONObject(s_and_end, strict, scan, None, list, memo)
        found = _Located(pairs)
        found.starts = {key: start for (key, _), start in zip(pairs, starts, strict=False)}
        return found, end

    decoder.parse_object = parse_object
    decoder.scan_once = py_make_scanner(decoder)
    try:
        node = decoder.decode(text)
    except (ValueError, RecursionError):
        return 1
    line = 1
    for part in loc:
        if not isinstance(node, _Located) or part not in node.starts:
            break
        line = text.count("\n", 0, node.starts[part]) + 1
        node = node[part]
    return line


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
