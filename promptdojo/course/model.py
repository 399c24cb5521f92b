"""The lesson model: Lesson → Step → Cell, every piece knowing the file and line it came from.

One parser (:mod:`promptdojo.course.parse`) builds this model; the web server and the cell check
only read it. Nothing downstream re-parses markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

#: Seconds a cell may run when neither it nor its lesson says otherwise.
DEFAULT_TIME_LIMIT = 30.0


@dataclass(frozen=True)
class Location:
    """A place in a lesson file; ``line`` is 1-based, ``None`` for the whole file."""

    path: Path
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else str(self.path)


@dataclass(frozen=True)
class Diagnostic:
    """One mistake in a lesson: where it is, what is wrong, and how to fix it."""

    location: Location
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}"
        return f"{text}: {self.hint}" if self.hint else text


class LessonError(Exception):
    """A lesson could not be loaded; ``diagnostics`` lists every mistake found."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        super().__init__("\n".join(str(d) for d in diagnostics))


class CellKind(StrEnum):
    """What a python cell is for; set with a class attribute, e.g. ``{.exercise}``."""

    CODE = "code"  # editable and runnable (the default)
    READONLY = "readonly"  # runnable, not editable
    SETUP = "setup"  # hidden; runs before the step's other cells
    EXERCISE = "exercise"  # starter code the learner completes
    CHECK = "check"  # hidden; runs after an exercise, fails it by raising
    SOLUTION = "solution"  # an exercise's solution, revealed on request
    WRONG = "wrong"  # hidden, never sent to learners: a wrong answer its check must reject


@dataclass(frozen=True)
class Cell:
    """A fenced python block of a step."""

    id: str
    code: str
    #: Where the first line of code is (the line after the opening fence).
    location: Location
    kind: CellKind = CellKind.CODE
    #: For checks, solutions and wrong answers: the id of their exercise.
    exercise: str | None = None
    #: Name of the exception this cell is expected to raise, e.g. ``"ZeroDivisionError"``.
    raises: str | None = None
    #: Seconds this cell may run; ``None`` means the lesson's default.
    time_limit: float | None = None
    #: Why the cell check skips this cell (``no-ci="..."``); ``None`` means it runs in CI.
    no_ci: str | None = None
    #: For wrong answers: text the check's rejection message must contain (``expect="..."``).
    expect: str | None = None
    #: The controls its code declares with literal arguments (``promptdojo.ui``), as the page
    #: draws them before the cell first runs: read once, by the parser. Not compared: they
    #: follow from the code.
    controls: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    @property
    def first_line(self) -> int:
        """Markdown line of the cell's first code line."""
        return self.location.line or 1

    @property
    def editable(self) -> bool:
        """Whether the learner may edit it."""
        return self.kind in (CellKind.CODE, CellKind.EXERCISE)

    @property
    def visible(self) -> bool:
        """Whether it appears as an editor on the page."""
        return self.kind in (CellKind.CODE, CellKind.READONLY, CellKind.EXERCISE)


@dataclass(frozen=True)
class Hint:
    """One progressive hint of an exercise, rendered to HTML."""

    html: str
    location: Location


@dataclass(frozen=True)
class Exercise:
    """Starter code, the check that judges it, hints in order, the solution, and the wrong
    answers the check must reject (``check`` proves them; learners never see them)."""

    id: str
    starter: Cell
    check: Cell
    hints: tuple[Hint, ...] = ()
    solution: Cell | None = None
    wrong: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class Orphan:
    """A check, solution, hint or wrong answer naming an exercise its step does not hold.

    The lesson reports it once every step is read: the exercise may be in another step.
    """

    what: str
    exercise: str
    location: Location


@dataclass(frozen=True)
class Prose:
    """Markdown between cells, already rendered to HTML."""

    html: str


@dataclass(frozen=True)
class Link:
    """A link in a step's prose to a lesson, a step, a heading or a cell of the course
    (``lesson:ID``, ``lesson:ID/N``, ``lesson:ID/N#cell-or-heading``)."""

    target: str
    location: Location


@dataclass(frozen=True)
class Step:
    """One page of a lesson: prose and visible cells in reading order, plus hidden parts."""

    number: int
    slug: str
    title: str
    path: Path
    parts: tuple[Prose | Cell, ...]
    setup: tuple[Cell, ...] = ()
    exercises: tuple[Exercise, ...] = ()
    #: Mistakes found in this step's file; a step with problems is shown only in development.
    problems: tuple[Diagnostic, ...] = ()
    #: Links to other places of the course, checked once every lesson is read.
    links: tuple[Link, ...] = ()
    #: The prose's headings as (anchor id, text), in order.
    headings: tuple[tuple[str, str], ...] = ()
    #: Parts naming an exercise this step lacks (reported by the lesson, which sees every step).
    orphans: tuple[Orphan, ...] = ()
    #: Mistakes that leave the step whole (a hint giving the solution away): warnings.
    warnings: tuple[Diagnostic, ...] = ()

    @property
    def cells(self) -> tuple[Cell, ...]:
        """The visible cells in order."""
        return tuple(p for p in self.parts if isinstance(p, Cell))

    def exercise(self, cell_id: str) -> Exercise | None:
        """The exercise whose starter is ``cell_id``."""
        return next((e for e in self.exercises if e.id == cell_id), None)


@dataclass(frozen=True)
class Lesson:
    """A lesson folder: its metadata and its steps, numbered from 1."""

    id: str
    title: str
    chapter: str
    path: Path
    packages: tuple[str, ...] = ()
    time_limit: float = DEFAULT_TIME_LIMIT
    seed: int | None = None
    #: Limits on each cell's process under ``check`` (``None``: the check's defaults).
    memory_limit_mb: int | None = None
    cpu_limit: float | None = None
    file_size_limit_mb: int | None = None
    #: Whether running a cell first runs the step's earlier cells not yet run (lesson.yaml).
    run_earlier_cells: bool = True
    #: Names whose objects the cells change only by assigning or storing into them, never by a
    #: call (lesson.yaml; course/needs.py).
    unchanged_by_calls: tuple[str, ...] = ()
    steps: tuple[Step, ...] = field(default_factory=tuple)
    #: Every mistake found in the lesson, in the order found; empty for a valid lesson.
    problems: tuple[Diagnostic, ...] = ()

    @property
    def lesson_problems(self) -> tuple[Diagnostic, ...]:
        """The problems that belong to no step file (``lesson.yaml``, step numbering)."""
        step_paths = {step.path for step in self.steps}
        return tuple(d for d in self.problems if d.location.path not in step_paths)

    def step(self, number: int) -> Step | None:
        """Step ``number`` (1-based), or ``None`` when out of range."""
        if 1 <= number <= len(self.steps):
            return self.steps[number - 1]
        return None

    def time_limit_of(self, cell: Cell) -> float:
        """The cell's own time limit, or the lesson's default."""
        return cell.time_limit if cell.time_limit is not None else self.time_limit
