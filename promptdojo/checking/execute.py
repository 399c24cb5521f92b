"""Execute a step's cells in order in CPython, with the same kernel the browser uses."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from promptdojo.course.model import Cell, Step
from promptdojo.kernel import CellResult, Kernel


@dataclass(frozen=True)
class CellOutcome:
    """One cell's result plus what it printed."""

    cell: Cell
    result: CellResult
    stdout: str
    stderr: str

    @property
    def markdown_line(self) -> int | None:
        """The markdown line of the error, when the error is inside the cell."""
        if self.result.error_line is None:
            return None
        return self.cell.first_line + self.result.error_line - 1


def run_step(step: Step, kernel: Kernel | None = None) -> list[CellOutcome]:
    """Run ``step``'s cells in one fresh namespace, stopping after the first failure."""
    kernel = kernel or Kernel()
    key = f"{step.path}"
    kernel.reset(key)
    outcomes: list[CellOutcome] = []
    for cell in step.cells:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = kernel.run(cell.code, key=key, cell_id=cell.id)
        outcomes.append(CellOutcome(cell, result, out.getvalue(), err.getvalue()))
        if not result.ok:
            break
    return outcomes
