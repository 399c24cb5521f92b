"""Run one step's cells in order, in this process, and judge each one.

The rules, for every cell of a step:

* hidden setup cells run first; if one fails, the step's cells are not run;
* a plain or read-only cell passes when it runs without error;
* a cell marked ``raises=Name`` passes only when it raises that exception;
* an exercise passes when its starter code fails its check and its solution passes it
  (without a solution, only the first half applies); the solution is what later cells see;
* a ``no-ci`` cell is skipped with its reason;
* after a failure, the step's later cells are skipped, not failed;
* a cell that runs past its time limit fails with a timeout.

Tracebacks point at the markdown file and line, since cells are compiled under them. The judge
also runs inside Pyodide (``check --pyodide``), so it needs only the standard library.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from typing import Protocol

from promptdojo.checking.outcome import CellOutcome, Output, Status
from promptdojo.course.model import DEFAULT_TIME_LIMIT, Cell, CellKind, Step
from promptdojo.kernel import CellResult, Kernel


class Limiter(Protocol):
    """Enforces a cell's time limit: ``with limiter(seconds): run the cell``.

    A limiter that stops cells by interrupt (Pyodide's) also has ``expired()``, true when the
    last ``KeyboardInterrupt`` was its doing.
    """

    def __call__(self, seconds: float) -> contextlib.AbstractContextManager[None]: ...


class StepRunner:
    """Runs the cells of one step in one fresh kernel namespace."""

    def __init__(
        self,
        step: Step,
        default_time_limit: float = DEFAULT_TIME_LIMIT,
        limiter: Limiter | None = None,
    ) -> None:
        self.step = step
        self.default_time_limit = default_time_limit
        if limiter is None:  # CPython's alarm; Pyodide passes one that uses the interrupt buffer
            from promptdojo.checking.limits import time_limit

            limiter = time_limit
        self.limiter = limiter
        self.kernel = Kernel()
        self.key = str(step.path)
        self.failed: str | None = None

    def _limit(self, cell: Cell) -> float:
        return cell.time_limit if cell.time_limit is not None else self.default_time_limit

    def execute(self, cell: Cell, limit: float) -> tuple[CellResult, Output, float]:
        """Run ``cell``'s code, capturing output, under ``limit`` seconds."""
        out, err = io.StringIO(), io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), self.limiter(limit):
            result = self.kernel.run(
                cell.code,
                key=self.key,
                cell_id=cell.id,
                filename=str(cell.location.path),
                first_line=cell.first_line,
            )
        seconds = time.perf_counter() - started
        expired = getattr(self.limiter, "expired", None)
        if result.error_type == "KeyboardInterrupt" and expired is not None and expired():
            # An interrupt-based limiter (Pyodide's) stops a cell with KeyboardInterrupt.
            result.error_type = "CellTimeout"
            result.error_message = f"the cell ran longer than its time limit of {limit:g} s"
        return result, Output(out.getvalue(), err.getvalue(), dict(result.value)), seconds

    def _outcome(
        self, cell: Cell, status: Status, message: str = "", at: Cell | None = None, **extra
    ) -> CellOutcome:
        """An outcome for ``cell``, located at ``at`` (the part that failed) if given."""
        where = at or cell
        return CellOutcome(
            cell.id, str(where.location.path), where.first_line, status, message, **extra
        )

    def _failure(self, cell: Cell, result: CellResult, what: str) -> tuple[str, str]:
        if result.error_type == "CellTimeout":
            return f"timed out: {result.error_message}", result.traceback or ""
        return f"{what}: {result.error_type}: {result.error_message}", result.traceback or ""

    def run_cell(self, cell: Cell) -> CellOutcome:
        """Judge one cell (setup, plain, read-only, raising or exercise)."""
        if self.failed is not None:
            return self._outcome(
                cell, Status.SKIPPED, f"skipped: cell {self.failed!r} failed earlier in this step"
            )
        if cell.no_ci:
            return self._outcome(cell, Status.SKIPPED, f"no-ci: {cell.no_ci}")
        if cell.kind is CellKind.EXERCISE:
            outcome = self._exercise(cell)
        else:
            result, output, seconds = self.execute(cell, self._limit(cell))
            outcome = self._judge(cell, result, output, seconds)
        if outcome.status is Status.FAILED:
            self.failed = cell.id
        return outcome

    def _judge(self, cell: Cell, result: CellResult, output: Output, seconds: float) -> CellOutcome:
        extra = {"seconds": seconds, "output": output}
        if cell.raises:
            if result.ok:
                return self._outcome(
                    cell,
                    Status.FAILED,
                    f"expected {cell.raises}, but the cell ran without an error",
                    **extra,
                )
            if result.error_type != cell.raises:
                message, tb = self._failure(cell, result, f"expected {cell.raises}, got")
                return self._outcome(cell, Status.FAILED, message, traceback=tb, **extra)
            return self._outcome(cell, Status.PASSED, **extra)
        if not result.ok:
            message, tb = self._failure(cell, result, "raised")
            return self._outcome(cell, Status.FAILED, message, traceback=tb, **extra)
        return self._outcome(cell, Status.PASSED, **extra)

    def _exercise(self, cell: Cell) -> CellOutcome:
        exercise = self.step.exercise(cell.id)
        assert exercise is not None, "the parser links every exercise to its check"
        limit = self._limit(cell)
        total = 0.0

        def run_part(part: Cell) -> CellResult:
            nonlocal total
            result, _, seconds = self.execute(part, limit)
            total += seconds
            return result

        def failed(message: str, traceback: str = "", at: Cell | None = None) -> CellOutcome:
            return self._outcome(
                cell,
                Status.FAILED,
                message,
                at=at,
                traceback=traceback,
                seconds=total,
                output=output,
            )

        starter, output, total = self.execute(cell, limit)
        if not starter.ok:
            return failed(*self._failure(cell, starter, "the starter code raised"))
        if run_part(exercise.check).ok:
            return failed(
                "the starter code already passes its check: leave something for the learner "
                "to do, or tighten the check"
            )
        if exercise.solution is not None:
            solved = run_part(exercise.solution)
            if not solved.ok:
                message, tb = self._failure(exercise.solution, solved, "the solution raised")
                return failed(message, tb, at=exercise.solution)
            verdict = run_part(exercise.check)
            if not verdict.ok:
                message, tb = self._failure(exercise.check, verdict, "the solution fails its check")
                return failed(
                    f"{message}: fix the solution, or the check", tb, at=exercise.solution
                )
        return self._outcome(cell, Status.PASSED, seconds=total, output=output)

    def run(self, on_outcome: Callable[[CellOutcome], None] | None = None) -> list[CellOutcome]:
        """Setup cells, then every visible cell, in order."""
        outcomes = []
        for cell in (*self.step.setup, *self.step.cells):
            outcome = self.run_cell(cell)
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
        return outcomes
