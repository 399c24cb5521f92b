"""An exercise's parts: its starter, and the checks, solutions, hints and wrong answers naming it.

A step links the parts that name one of its own exercises; a part naming an exercise the step
lacks is an :class:`~promptdojo.course.model.Orphan`, which the lesson reports once it has read
every step (:func:`orphan_problems`): the exercise may be in another step, and the message
then says where.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from promptdojo.course.model import Cell, CellKind, Exercise, Hint, Location, Orphan, Prose, Step
from promptdojo.course.problems import Report, did_you_mean

#: What a part is called in messages, by its kind.
_NAMES = {CellKind.CHECK: "check", CellKind.SOLUTION: "solution", CellKind.WRONG: "wrong answer"}


def wrong_id(cell: Cell, attached: Iterable[Cell]) -> str:
    """The id of a wrong answer written without one: ``EXERCISE-wrong-N``, N counting from 1."""
    taken = sum(c.kind is CellKind.WRONG and c.exercise == cell.exercise for c in attached)
    return f"{cell.exercise}-wrong-{taken + 1}"


def link_exercises(
    parts: list[Prose | Cell],
    attached: list[Cell],
    hints: list[tuple[str | None, Hint, int]],
    path: Path,
    report: Report,
) -> tuple[tuple[Exercise, ...], tuple[Orphan, ...]]:
    """The step's exercises with their parts, and the parts naming an exercise it lacks."""
    starters = {c.id: c for c in parts if isinstance(c, Cell) and c.kind is CellKind.EXERCISE}
    checks: dict[str, Cell] = {}
    solutions: dict[str, Cell] = {}
    wrong: dict[str, list[Cell]] = {}
    orphans: list[Orphan] = []
    for cell in attached:
        target = cell.exercise or ""
        line = cell.first_line - 1
        if not cell.exercise:
            continue  # reported by the cell: it needs for=
        if target not in starters:
            orphans.append(Orphan(_NAMES[cell.kind], target, Location(path, line)))
            continue
        if cell.kind is CellKind.WRONG:
            wrong.setdefault(target, []).append(cell)
            continue
        bucket = checks if cell.kind is CellKind.CHECK else solutions
        if target in bucket:
            report.add(
                path,
                line,
                f"exercise {target!r} already has a {cell.kind.value} "
                f"(line {bucket[target].first_line - 1})",
                "keep one",
            )
            continue
        bucket[target] = cell
    exercise_hints: dict[str, list[Hint]] = {}
    for target, hint, line in hints:
        if not target:
            report.add(
                path, line, "hint without for=EXERCISE_ID", "name the exercise it helps with"
            )
        elif target not in starters:
            orphans.append(Orphan("hint", target, Location(path, line)))
        else:
            exercise_hints.setdefault(target, []).append(hint)
    exercises = []
    for cell_id, starter in starters.items():
        if cell_id not in checks:
            report.add(
                path,
                starter.first_line - 1,
                f"exercise {cell_id!r} has no check",
                "add ```python {.check for=" + cell_id + "} with asserts",
            )
            continue
        exercises.append(
            Exercise(
                id=cell_id,
                starter=starter,
                check=checks[cell_id],
                hints=tuple(exercise_hints.get(cell_id, ())),
                solution=solutions.get(cell_id),
                wrong=tuple(wrong.get(cell_id, ())),
            )
        )
    return tuple(exercises), tuple(orphans)


def orphan_problems(steps: Iterable[Step], report: Report) -> None:
    """Report each part naming an exercise its step lacks: where that exercise is, if in
    another step of the lesson; else the step's exercise it most likely meant."""
    steps = list(steps)
    starters = {c.id: c for step in steps for c in step.cells if c.kind is CellKind.EXERCISE}
    for step in steps:
        own = [c.id for c in step.cells if c.kind is CellKind.EXERCISE]
        for orphan in step.orphans:
            where = orphan.location
            elsewhere = starters.get(orphan.exercise)
            if elsewhere is not None:
                at = Location(elsewhere.location.path, elsewhere.first_line - 1)
                report.add(
                    where.path,
                    where.line,
                    f"a {orphan.what} must be in the same step as its exercise; "
                    f"{orphan.exercise!r} is at {at}",
                    f"move the {orphan.what} to {at.path.name}",
                )
                continue
            report.add(
                where.path,
                where.line,
                f"{orphan.what} for unknown exercise {orphan.exercise!r}",
                did_you_mean(orphan.exercise, own)
                if own
                else "add an exercise cell {#" + orphan.exercise + " .exercise} before it",
            )
