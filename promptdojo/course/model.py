"""The lesson model: Lesson → Step → Cell, every piece knowing the file and line it came from.

One parser (:mod:`promptdojo.course.parse`) builds this model; the web server and the cell check
only read it. Nothing downstream re-parses markdown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


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


@dataclass(frozen=True)
class Cell:
    """A fenced python block of a step: code the learner can edit and run."""

    id: str
    code: str
    #: Where the first line of code is (the line after the opening fence).
    location: Location
    editable: bool = True

    @property
    def first_line(self) -> int:
        """Markdown line of the cell's first code line."""
        return self.location.line or 1


@dataclass(frozen=True)
class Prose:
    """Markdown between cells, already rendered to HTML."""

    html: str


@dataclass(frozen=True)
class Step:
    """One page of a lesson: prose and cells in reading order."""

    number: int
    slug: str
    title: str
    path: Path
    parts: tuple[Prose | Cell, ...]

    @property
    def cells(self) -> tuple[Cell, ...]:
        """The step's cells in order."""
        return tuple(p for p in self.parts if isinstance(p, Cell))


@dataclass(frozen=True)
class Lesson:
    """A lesson folder: its metadata and its steps, numbered from 1."""

    id: str
    title: str
    chapter: str
    version: int
    path: Path
    packages: tuple[str, ...] = ()
    time_limit: float = 30.0
    seed: int = 0
    steps: tuple[Step, ...] = field(default_factory=tuple)

    def step(self, number: int) -> Step | None:
        """Step ``number`` (1-based), or ``None`` when out of range."""
        if 1 <= number <= len(self.steps):
            return self.steps[number - 1]
        return None
