"""pytest plugin: ``pytest lessons/`` collects one test per cell, run with the cell check's rules,
and one per wrong answer of an exercise, right after the exercise's own.

Items are named ``<file>::<step>::<cell-id>`` and report the markdown line. A step's cells share
one namespace and run in order; running one cell alone runs the cells above it first. After a
failure, the step's later cells are skipped with the reason. Each step file is one pytest file, so
``pytest-xdist --dist loadfile`` keeps a step's cells together; ``pytest-timeout`` keeps working
because the cell time limit never outlives an outer alarm.

Cells see the environment ``promptdojo check`` gives them (:mod:`promptdojo.checking.environment`)
while they run, plus the names given with ``--pass-env NAME``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from promptdojo.checking.backends.cpython import ONE_BLAS_THREAD
from promptdojo.checking.environment import scrubbed_environ
from promptdojo.checking.judge import StepRunner
from promptdojo.checking.outcome import CellOutcome, Status, cells_of
from promptdojo.checking.report import code_lines_at, excerpt
from promptdojo.course.model import Cell, Lesson, LessonError
from promptdojo.course.parse import LESSON_FILE, STEP_FILE, load_lesson

_LESSONS = pytest.StashKey[dict[Path, Lesson | LessonError]]()

# Cells run in this process: one BLAS thread, as in `promptdojo check` (pytest loads this plugin
# before any test module, so before numpy starts its thread pool). An explicit setting wins.
for _name, _value in ONE_BLAS_THREAD.items():
    os.environ.setdefault(_name, _value)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("promptdojo").addoption(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="lesson cells see this environment variable too (repeatable); by default they see "
        "only PATH, HOME, the locale and a few more, as under `promptdojo check`",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_LESSONS] = {}


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.File | None:
    if STEP_FILE.match(file_path.name) and (file_path.parent / LESSON_FILE).is_file():
        return StepFile.from_parent(parent, path=file_path)
    return None


class CellFailedError(Exception):
    """A cell failed its check; carries the outcome for the report."""

    def __init__(self, outcome: CellOutcome, cell: Cell) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome
        self.cell = cell


class StepFile(pytest.File):
    """One step file of a lesson."""

    def _lesson(self) -> Lesson:
        cache = self.config.stash[_LESSONS]
        folder = self.path.parent
        if folder not in cache:
            try:
                cache[folder] = load_lesson(folder)
            except LessonError as exc:
                cache[folder] = exc
        loaded = cache[folder]
        if isinstance(loaded, LessonError):
            raise self.CollectError(f"the lesson in {folder} is invalid:\n{loaded}")
        return loaded

    def collect(self):
        lesson = self._lesson()
        step = next(s for s in lesson.steps if s.path == self.path)
        yield StepNode.from_parent(self, name=str(step.number), lesson=lesson, step=step)


class StepNode(pytest.Collector):
    """A step: its cells, sharing one :class:`StepRunner`."""

    def __init__(self, *, lesson: Lesson, step: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lesson = lesson
        self.step = step
        self.runner: StepRunner | None = None
        self.done: dict[str, CellOutcome] = {}

    def collect(self):
        for cell in cells_of(self.step):
            yield CellItem.from_parent(self, name=cell.id, cell=cell)

    def outcome_of(self, cell: Cell) -> CellOutcome:
        """Run the cells above ``cell`` that have not run yet, then ``cell`` (for a wrong
        answer: its exercise, which judges its wrong answers)."""
        if self.runner is None:
            self.runner = StepRunner(self.step, self.lesson.time_limit)
        pass_env = self.config.getoption("pass_env") or []
        for other in (*self.step.setup, *self.step.cells):
            if cell.id in self.done:
                break
            if other.id not in self.done:
                with scrubbed_environ(pass_env):
                    for outcome in self.runner.outcomes_of(other):
                        self.done[outcome.cell_id] = outcome
        return self.done[cell.id]


class CellItem(pytest.Item):
    """One cell, judged by the same rules as ``promptdojo check``."""

    def __init__(self, *, cell: Cell, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.cell = cell

    def runtest(self) -> None:
        assert isinstance(self.parent, StepNode)
        outcome = self.parent.outcome_of(self.cell)
        if outcome.status is Status.SKIPPED:
            pytest.skip(outcome.message)
        if outcome.status is Status.FAILED:
            raise CellFailedError(outcome, self.cell)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:
        if isinstance(excinfo.value, CellFailedError):
            outcome = excinfo.value.outcome
            assert isinstance(self.parent, StepNode)
            lines = code_lines_at(self.parent.step, outcome)
            parts = [f"{outcome.path}:{outcome.line}: {outcome.message}", excerpt(outcome, lines)]
            if outcome.traceback:
                parts.append(outcome.traceback.rstrip())
            return "\n".join(p for p in parts if p)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        # pytest counts lines from 0; the markdown line of the cell's first code line.
        return self.path, self.cell.first_line - 1, f"cell {self.cell.id}"
