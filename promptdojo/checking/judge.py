"""Run one step's cells in order, in this process, and judge each one.

The rules, for every cell of a step:

* hidden setup cells run first; if one fails, the step's cells are not run;
* a plain or read-only cell passes when it runs without error;
* a cell marked ``raises=Name`` passes only when it raises that exception;
* an exercise passes when its starter code fails its check and its solution passes it
  (without a solution, only the first half applies); the solution is what later cells see;
* each wrong answer of an exercise is an outcome of its own, right after the exercise's:
  it passes when the check rejects it as ``expect=`` says (:mod:`.wrong`);
* a ``no-ci`` cell is skipped with its reason;
* a failed setup cell skips the whole step; after any other failure, only the later cells that
  use a name the failed cell did not get to bind are skipped (named in the message), and every
  independent cell still runs, so one run reports every independent problem of a step;
* an exercise's solution runs even when its starter is judged wrong, so the cells after it see
  the namespace they would see with every earlier cell passing;
* a cell that runs past its time limit fails with a timeout.

Tracebacks point at the markdown file and line, since cells are compiled under them. The judge
also runs inside Pyodide (``check --pyodide``), so it needs only the standard library.
"""

from __future__ import annotations

import ast
import contextlib
import re
import time
from collections.abc import Callable
from typing import Protocol

from promptdojo.checking.capture import CappedOutput
from promptdojo.checking.outcome import CellOutcome, Output, Status
from promptdojo.checking.wrong import judge_wrong, skipped_wrong
from promptdojo.course.model import DEFAULT_TIME_LIMIT, Cell, CellKind, Step
from promptdojo.kernel import CellResult, Kernel, seed_everything

#: Stands for every name: a failed cell whose bindings are unknown (``import *``, bad syntax).
ANY_NAME = "*"


def bound_names(code: str) -> set[str]:
    """Names ``code`` binds in its namespace (not inside its functions' or classes' bodies)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {ANY_NAME}
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            pending += node.decorator_list  # a walrus in a decorator binds here too
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    names.add(ANY_NAME)
                else:
                    names.add(alias.asname or alias.name.split(".")[0])
            continue
        if isinstance(
            node, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
        ):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        if isinstance(node, ast.Global):
            names.update(node.names)
        pending += ast.iter_child_nodes(node)
    return names


def used_names(code: str) -> set[str]:
    """Every name ``code`` reads, in its own body or in the functions it defines."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+)(?P<rest>.*)$')


def learner_traceback(text: str, step: Step) -> str:
    """A traceback numbered in the cell's own lines, as the learner's browser shows it.

    The check compiles cells under their markdown file; the browser names each cell
    ``<cell ID>`` and counts its lines from 1. Both show the source line and carets (the kernel
    gives ``linecache`` every cell's source).
    """
    cells = [*step.setup, *step.cells]
    for exercise in step.exercises:
        cells += [exercise.check] + ([exercise.solution] if exercise.solution else [])
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        match = _FRAME.match(line.rstrip("\n"))
        if match and match["file"] == str(step.path):
            number = int(match["line"])
            cell = next(
                (c for c in cells if c.first_line <= number <= c.first_line + c.code.count("\n")),
                None,
            )
            if cell is not None:
                local = number - cell.first_line + 1
                out.append(f'  File "<cell {cell.id}>", line {local}{match["rest"]}\n')
                continue
        out.append(line)
    return "".join(out)


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
        seed: int | None = None,
        numpy: bool = False,
    ) -> None:
        self.step = step
        #: ``lesson.yaml``'s seed, applied before the step's first cell (``None``: fresh numbers).
        self.seed = seed
        self.numpy = numpy
        self.default_time_limit = default_time_limit
        if limiter is None:  # CPython's alarm; Pyodide passes one that uses the interrupt buffer
            from promptdojo.checking.limits import time_limit

            limiter = time_limit
        self.limiter = limiter
        self.kernel = Kernel()
        self.key = str(step.path)
        #: The setup cell that failed: nothing after it runs.
        self.failed: str | None = None
        #: Names a failed cell would have bound, each with that cell's id.
        self.broken: dict[str, str] = {}
        #: The outcomes of each exercise's wrong answers, by exercise id, once it has run.
        self.wrong: dict[str, list[CellOutcome]] = {}

    def _limit(self, cell: Cell) -> float:
        return cell.time_limit if cell.time_limit is not None else self.default_time_limit

    def execute(self, cell: Cell, limit: float) -> tuple[CellResult, Output, float]:
        """Run ``cell``'s code, capturing output, under ``limit`` seconds."""
        output = CappedOutput()
        out, err = output.stream("stdout"), output.stream("stderr")
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
        shown = Output(output.text("stdout"), output.text("stderr"), dict(result.value))
        shown.truncated = output.cap if output.truncated else 0
        return result, shown, seconds

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
        exercise = self.step.exercise(cell.id) if cell.kind is CellKind.EXERCISE else None
        parts = [cell] + ([exercise.check, exercise.solution] if exercise else [])
        codes = [p.code for p in parts if p is not None]
        skip = self._depends_on_failure(codes)
        if skip:
            # What it would have bound is missing too: the cells that use it are skipped in turn.
            culprit = self.broken.get(ANY_NAME) or next(
                self.broken[n]
                for n in sorted(set().union(*map(used_names, codes)))
                if n in self.broken
            )
            for name in set().union(*(bound_names(code) for code in codes)):
                self.broken.setdefault(name, culprit)
            return self._outcome(cell, Status.SKIPPED, skip)
        if cell.no_ci:
            return self._outcome(cell, Status.SKIPPED, f"no-ci: {cell.no_ci}")
        bound = set().union(*(bound_names(code) for code in codes))
        namespace = self.kernel.namespace(self.key)
        before = {name: id(namespace[name]) for name in bound if name in namespace}
        if exercise is not None:
            outcome, namespace_ok = self._exercise(cell)
        else:
            result, output, seconds = self.execute(cell, self._limit(cell))
            outcome = self._judge(cell, result, output, seconds)
            namespace_ok = outcome.status is not Status.FAILED
        if outcome.status is Status.FAILED and cell.kind is CellKind.SETUP:
            self.failed = cell.id
        elif namespace_ok:
            for name in bound:
                self.broken.pop(name, None)
        else:
            # A name the cell bound before it failed is there; one it never reached is missing
            # (or still holds an earlier cell's value, which this cell meant to replace).
            for name in bound:
                fresh = name in namespace and before.get(name) != id(namespace[name])
                if fresh:
                    self.broken.pop(name, None)
                else:
                    self.broken[name] = cell.id
        return outcome

    def _depends_on_failure(self, codes: list[str]) -> str:
        """Why a cell is skipped: it reads a name a failed cell would have bound; else ``""``."""
        if not self.broken:
            return ""
        if ANY_NAME in self.broken:
            return f"skipped: cell {self.broken[ANY_NAME]!r} failed earlier in this step"
        used = sorted(set().union(*(used_names(code) for code in codes)) & set(self.broken))
        if not used:
            return ""
        by_cell: dict[str, list[str]] = {}
        for name in used:
            by_cell.setdefault(self.broken[name], []).append(name)
        reasons = "; ".join(
            f"{', '.join(names)}, missing because cell {cell_id!r} failed earlier in this step"
            for cell_id, names in by_cell.items()
        )
        return f"skipped: it uses {reasons}"

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
            # The error is the point of the cell: record it as the learner's browser shows it.
            output.error = learner_traceback(result.traceback or "", self.step)
            return self._outcome(cell, Status.PASSED, **extra)
        if not result.ok:
            message, tb = self._failure(cell, result, "raised")
            return self._outcome(cell, Status.FAILED, message, traceback=tb, **extra)
        return self._outcome(cell, Status.PASSED, **extra)

    def _exercise(self, cell: Cell) -> tuple[CellOutcome, bool]:
        """The exercise's verdict, and whether the namespace is as later cells expect it.

        The solution runs even when the starter is judged wrong, since it is what the cells
        after an exercise see; the first problem found is the one reported.
        """
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

        before = dict(self.kernel.namespace(self.key))
        starter, output, total = self.execute(cell, limit)
        self.wrong[cell.id] = judge_wrong(self, exercise, limit, before)
        problem: CellOutcome | None = None
        if not starter.ok:
            problem = failed(*self._failure(cell, starter, "the starter code raised"))
        elif run_part(exercise.check).ok:
            problem = failed(
                "the starter code already passes its check: leave something for the learner "
                "to do, or tighten the check"
            )
        if exercise.solution is None:
            passed = self._outcome(cell, Status.PASSED, seconds=total, output=output)
            return problem or passed, starter.ok
        solved = run_part(exercise.solution)
        if not solved.ok:
            message, tb = self._failure(exercise.solution, solved, "the solution raised")
            return problem or failed(message, tb, at=exercise.solution), False
        verdict = run_part(exercise.check)
        if not verdict.ok:
            message, tb = self._failure(exercise.check, verdict, "the solution fails its check")
            return problem or failed(
                f"{message}: fix the solution, or the check", tb, at=exercise.solution
            ), False
        if problem is not None:
            problem.seconds = total
        return problem or self._outcome(cell, Status.PASSED, seconds=total, output=output), True

    def outcomes_of(self, cell: Cell) -> list[CellOutcome]:
        """Judge one cell: its outcome, then, for an exercise, its wrong answers' outcomes."""
        outcome = self.run_cell(cell)
        exercise = self.step.exercise(cell.id) if cell.kind is CellKind.EXERCISE else None
        if exercise is None:
            return [outcome]
        wrong = self.wrong.get(cell.id)
        return [
            outcome,
            *(wrong if wrong is not None else skipped_wrong(exercise, outcome.message)),
        ]

    def run(self, on_outcome: Callable[[CellOutcome], None] | None = None) -> list[CellOutcome]:
        """Setup cells, then every visible cell, in order, each exercise with its wrong answers."""
        outcomes = []
        if self.seed is not None:
            seed_everything(self.seed, numpy=self.numpy)
        for cell in (*self.step.setup, *self.step.cells):
            for outcome in self.outcomes_of(cell):
                outcomes.append(outcome)
                if on_outcome is not None:
                    on_outcome(outcome)
        return outcomes
