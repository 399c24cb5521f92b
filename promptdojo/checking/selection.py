"""What ``promptdojo check`` runs: folders of lessons, one lesson, one step file, or one cell.

Arguments read as pytest node ids do: ``lessons/``, ``lessons/top-p``, ``lessons/top-p/02-x.md``,
``lessons/top-p/02-x.md::count`` or the id the check itself prints,
``lessons/top-p/02-x.md::2::count``. A selected cell runs after the cells of its step above it
(they build its namespace) and is the one reported, with any failure above it that explains it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from promptdojo.course.model import Cell, Diagnostic, Location, Step
from promptdojo.course.parse import LESSON_FILE, STEP_FILE


@dataclass(frozen=True)
class Target:
    """One argument: a folder (of lessons, or a lesson), or a step file with an optional cell."""

    path: Path
    step_file: Path | None = None
    cell_id: str | None = None

    @property
    def folder(self) -> Path:
        """What validation reads: the folder itself, or the step file's lesson."""
        return self.step_file.parent if self.step_file is not None else self.path


def parse_target(argument: Path | str) -> Target | Diagnostic:
    """Read one argument; a :class:`Diagnostic` saying what to write when it names nothing."""
    text = str(argument)
    file_part, _, rest = text.partition("::")
    path = Path(file_part)
    cell_id = rest.rsplit("::", 1)[-1] if rest else None
    if path.suffix == ".md" or rest:
        if not path.is_file():
            return Diagnostic(Location(path), "no such step file", _what_exists(path))
        if not (path.parent / LESSON_FILE).is_file():
            return Diagnostic(
                Location(path), f"no {LESSON_FILE} next to this step file", "pass a lesson's step"
            )
        if STEP_FILE.match(path.name) is None:
            return Diagnostic(
                Location(path), "not a step file", "step files are named like 01-overview.md"
            )
        return Target(path, step_file=path, cell_id=cell_id or None)
    return Target(path)


def _what_exists(path: Path) -> str:
    steps = sorted(p.name for p in path.parent.glob("*.md")) if path.parent.is_dir() else []
    if steps:
        return f"{path.parent} holds {', '.join(steps)}"
    return "pass a lesson folder, a step file (lessons/x/01-y.md) or FILE::cell-id"


def _same(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _under(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def cell_ids(step: Step) -> list[str]:
    """Every id a selection may name in ``step``: setup, visible, check, solution and
    wrong-answer cells."""
    ids = [c.id for c in (*step.setup, *step.cells)]
    for exercise in step.exercises:
        ids += [exercise.check.id] + ([exercise.solution.id] if exercise.solution else [])
        ids += [wrong.id for wrong in exercise.wrong]
    return ids


def _reported_cell(step: Step, cell_id: str) -> tuple[Cell, str] | None:
    """The cell the run goes up to for ``cell_id`` (a check, solution or wrong answer: its
    exercise), and the id whose outcome is reported (a wrong answer's own)."""
    for cell in (*step.setup, *step.cells):
        if cell.id == cell_id:
            return cell, cell.id
    for exercise in step.exercises:
        parts = (exercise.check, exercise.solution)
        if any(p is not None and p.id == cell_id for p in parts):
            return exercise.starter, exercise.id
        if any(wrong.id == cell_id for wrong in exercise.wrong):
            return exercise.starter, cell_id
    return None


@dataclass(frozen=True)
class Selected:
    """A step to run, cut after the selected cell, and the id whose outcome is reported."""

    step: Step
    cell_id: str | None = None


def select(
    targets: list[Target], lesson_steps: list[tuple[object, Step]]
) -> tuple[list[tuple[object, Selected]], list[Diagnostic]]:
    """The steps (and cells) ``targets`` name among ``lesson_steps``, in lesson order."""
    chosen: list[tuple[object, Selected]] = []
    problems: list[Diagnostic] = []
    whole = [t for t in targets if t.step_file is None]
    for lesson, step in lesson_steps:
        if any(_under(step.path, t.path) for t in whole):
            chosen.append((lesson, Selected(step)))
            continue
        picks = [t for t in targets if t.step_file is not None and _same(t.step_file, step.path)]
        if any(t.cell_id is None for t in picks):
            chosen.append((lesson, Selected(step)))
            continue
        for target in picks:
            found = _reported_cell(step, target.cell_id or "")
            if found is None:
                problems.append(
                    Diagnostic(
                        Location(step.path),
                        f"no cell {target.cell_id!r} in this step",
                        f"its cells are: {', '.join(cell_ids(step)) or 'none'}",
                    )
                )
                continue
            cell, reported = found
            chosen.append((lesson, Selected(cut_after(step, cell), reported)))
    return chosen, problems


def cut_after(step: Step, cell: Cell) -> Step:
    """``step`` with only the visible cells up to ``cell`` (all setup cells stay)."""
    visible = [c.id for c in step.cells]
    if cell.id not in visible:  # a setup cell: run the setup only
        return replace(step, parts=(), exercises=())
    keep = set(visible[: visible.index(cell.id) + 1])
    parts = tuple(p for p in step.parts if not isinstance(p, Cell) or p.id in keep)
    exercises = tuple(e for e in step.exercises if e.id in keep)
    return replace(step, parts=parts, exercises=exercises)
