"""Collecting lesson mistakes: each with its file, line and a fix, so one run reports them all."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from promptdojo.course.model import Diagnostic, Location


@dataclass
class Report:
    """Diagnostics collected while parsing."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, path: Path, line: int | None, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(Location(path, line), message, hint))


def did_you_mean(word: object, choices: tuple[str, ...] | list[str]) -> str:
    # YAML keys need not be strings (``1:``, ``null:``), so compare their text.
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"use one of: {', '.join(choices)}"


def read_text(path: Path, report: Report) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        report.add(path, line, "file is not valid UTF-8", "save it as UTF-8")
    except OSError as exc:
        report.add(path, None, f"cannot read file ({exc.strerror})")
    return None
