"""Hand a step's cells to a worker process as JSON, so no process re-parses markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from promptdojo.course.model import Cell, CellKind, Exercise, Location, Step


def cell_to_dict(cell: Cell) -> dict[str, Any]:
    return {
        "id": cell.id,
        "code": cell.code,
        "path": str(cell.location.path),
        "line": cell.location.line,
        "kind": cell.kind.value,
        "exercise": cell.exercise,
        "raises": cell.raises,
        "time_limit": cell.time_limit,
        "no_ci": cell.no_ci,
        "expect": cell.expect,
    }


def cell_from_dict(data: dict[str, Any]) -> Cell:
    return Cell(
        id=data["id"],
        code=data["code"],
        location=Location(Path(data["path"]), data["line"]),
        kind=CellKind(data["kind"]),
        exercise=data["exercise"],
        raises=data["raises"],
        time_limit=data["time_limit"],
        no_ci=data["no_ci"],
        expect=data.get("expect"),
    )


def step_to_dict(step: Step) -> dict[str, Any]:
    """The parts of a step that running it needs (no prose, no hints)."""
    return {
        "number": step.number,
        "slug": step.slug,
        "title": step.title,
        "path": str(step.path),
        "cells": [cell_to_dict(c) for c in step.cells],
        "setup": [cell_to_dict(c) for c in step.setup],
        "exercises": [
            {
                "id": e.id,
                "check": cell_to_dict(e.check),
                "solution": cell_to_dict(e.solution) if e.solution else None,
                "wrong": [cell_to_dict(c) for c in e.wrong],
            }
            for e in step.exercises
        ],
    }


def step_from_dict(data: dict[str, Any]) -> Step:
    cells = tuple(cell_from_dict(c) for c in data["cells"])
    by_id = {c.id: c for c in cells}
    exercises = tuple(
        Exercise(
            id=e["id"],
            starter=by_id[e["id"]],
            check=cell_from_dict(e["check"]),
            solution=cell_from_dict(e["solution"]) if e["solution"] else None,
            wrong=tuple(cell_from_dict(c) for c in e.get("wrong", ())),
        )
        for e in data["exercises"]
    )
    return Step(
        number=data["number"],
        slug=data["slug"],
        title=data["title"],
        path=Path(data["path"]),
        parts=cells,
        setup=tuple(cell_from_dict(c) for c in data["setup"]),
        exercises=exercises,
    )
