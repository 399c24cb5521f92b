"""``check --record`` and ``--check-outputs``: a run's outputs against the lesson's records.

The record files and how outputs compare are the course's (:mod:`promptdojo.course.records`);
this module picks the outputs worth keeping from a run: visible cells that passed.
"""

from __future__ import annotations

from pathlib import Path

from promptdojo.checking.outcome import CheckResult, Status, StepResult
from promptdojo.course.records import (
    ABOVE_KEY,
    CODE_KEY,
    STALE_CELL,
    above_hashes,
    code_hash,
    load_records,
    noise_hint,
    output_diff,
    refresh_command,
    stale_records,
    write_step_records,
)

__all__ = ["drift", "noise_hint", "stale", "write_records"]


def _visible(step_result: StepResult) -> dict[str, dict]:
    """Each passed visible cell's output, with the hashes of the code that produced it: its
    own, and the code above it in the step."""
    code = {c.id: c.code for c in step_result.step.cells}
    above = above_hashes(step_result.step)
    return {
        o.cell_id: {
            **o.output.to_dict(),
            CODE_KEY: code_hash(code[o.cell_id]),
            ABOVE_KEY: above[o.cell_id],
        }
        for o in step_result.outcomes
        if o.cell_id in code and o.status is Status.PASSED
    }


def write_records(result: CheckResult) -> list[Path]:
    """Write every step's outputs; return the files written."""
    written = []
    for step_result in result.steps:
        outputs = _visible(step_result)
        if step_result.selected is not None:  # one cell ran: keep the others' records
            outputs = {**load_records(step_result.step), **outputs}
        written.append(write_step_records(step_result.step, outputs))
    return written


def drift(result: CheckResult) -> list[tuple[str, str, str]]:
    """``(file:line, cell id, unified diff)`` for every passed cell whose output changed."""
    changes = []
    for step_result in result.steps:
        recorded = load_records(step_result.step)
        by_id = {o.cell_id: o for o in step_result.outcomes}
        for cell_id, output in _visible(step_result).items():
            where = f"{by_id[cell_id].path}:{by_id[cell_id].line}"
            if cell_id not in recorded:
                changes.append(
                    (where, cell_id, "no recorded output: run `promptdojo check --record`")
                )
                continue
            diff = output_diff(recorded[cell_id], output)
            if diff:
                changes.append((where, cell_id, diff))
    return changes


def stale(result: CheckResult) -> list[tuple[str, str, str]]:
    """``(file:line, cell id, why: command)`` for every record made from other code than the
    cell's, or before a cell above it changed.

    The page marks such a record the same way; the command re-records that one cell, or the
    whole step when code above it changed (every cell below is affected).
    """
    found = []
    for step_result in result.steps:
        recorded = load_records(step_result.step)
        why = stale_records(step_result.step, recorded)
        ran = {o.cell_id for o in step_result.outcomes}
        for cell in step_result.step.cells:
            if cell.id in ran and cell.id in why:
                where = f"{cell.location.path}:{cell.first_line}"
                path = cell.location.path
                command = refresh_command(path, cell.id if why[cell.id] == STALE_CELL else None)
                found.append((where, cell.id, f"{why[cell.id]}: run `{command}`"))
    return found
