"""What a check found: a verdict per cell, the outcomes of a step, and of a whole run.

:class:`Status`, :class:`Output` and :class:`CellOutcome` also run inside Pyodide (the judge
reports through them), so they need only the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from promptdojo.course.model import Cell, Diagnostic, Lesson, Step


class Status(StrEnum):
    """How a cell fared."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    NOT_RUN = "not run"


@dataclass
class Output:
    """What a cell printed and showed: the record kept by ``--record``."""

    stdout: str = ""
    stderr: str = ""
    value: dict[str, str] = field(default_factory=dict)
    #: The traceback a cell expected to raise shows learners (numbered in the cell's lines).
    error: str = ""
    #: When the cell printed more than :data:`promptdojo.kernel.OUTPUT_CAP` characters: that
    #: cap (the rest was dropped, as the browser drops it); else 0.
    truncated: int = 0

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "stdout": self.stdout,
            "stderr": self.stderr,
            "value": dict(self.value),
        }
        if self.error:
            data["error"] = self.error
        if self.truncated:
            data["truncated"] = self.truncated
        return data


@dataclass
class CellOutcome:
    """The verdict on one cell, with what it printed and why it failed."""

    cell_id: str
    path: str
    line: int
    status: Status
    message: str = ""
    traceback: str = ""
    seconds: float = 0.0
    output: Output = field(default_factory=Output)

    def to_dict(self) -> dict[str, object]:
        return {
            "cell_id": self.cell_id,
            "path": self.path,
            "line": self.line,
            "status": self.status.value,
            "message": self.message,
            "traceback": self.traceback,
            "seconds": self.seconds,
            "output": self.output.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> CellOutcome:
        output = Output(**data["output"])
        return cls(**{**data, "status": Status(data["status"]), "output": output})

    @classmethod
    def of(cls, cell: Cell, status: Status, message: str = "") -> CellOutcome:
        """An outcome for ``cell`` at its own place, with nothing run."""
        return cls(cell.id, str(cell.location.path), cell.first_line, status, message)


@dataclass
class StepResult:
    """Every cell outcome of one step."""

    lesson: Lesson
    step: Step
    outcomes: list[CellOutcome]
    seconds: float
    #: The one cell reported when the run named a cell (``FILE::cell-id``); ``None``: all of them.
    selected: str | None = None


@dataclass
class CheckResult:
    """The whole run: validation problems and every step's outcomes."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def outcomes(self) -> list[CellOutcome]:
        return [o for s in self.steps for o in s.outcomes]

    def count(self, status: Status) -> int:
        return sum(o.status is status for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """0 all passed; 1 a failure or a validation problem; 3 some cells could not run."""
        if self.diagnostics or self.count(Status.FAILED):
            return 1
        if self.count(Status.NOT_RUN):
            return 3
        return 0


def cells_of(step: Step) -> list[Cell]:
    """The cells a step reports on, in order: setup cells, then the visible ones, each
    exercise followed by its wrong answers."""
    cells = list(step.setup)
    for cell in step.cells:
        exercise = step.exercise(cell.id)
        cells += [cell, *(exercise.wrong if exercise else ())]
    return cells


def fill_missing(step: Step, done: list[CellOutcome], why: str) -> list[CellOutcome]:
    """Outcomes for the cells a crashed or killed process never reported."""
    cells = cells_of(step)
    out = list(done)
    for i, cell in enumerate(cells[len(done) :]):
        status, message = (Status.FAILED, why) if i == 0 else (Status.SKIPPED, "")
        if i:
            message = f"skipped: cell {cells[len(done)].id!r} failed earlier in this step"
        out.append(CellOutcome.of(cell, status, message))
    return out
