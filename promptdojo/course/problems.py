"""Collecting lesson mistakes: each with its file, line and a fix, so one run reports them all."""

from __future__ import annotations

import codecs
import difflib
import re
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


#: Files an editor or an operating system keeps beside the ones it edits, never lesson files:
#: Emacs' lock ``.#x`` and auto-save ``#x#``, macOS' ``._x``, Vim's swap files and its ``4913``
#: write test, backups ``x~``, JetBrains' and others' temporary copies.
_EDITOR_FILE = re.compile(
    r"^(?:\..*|#.*#|4913|.*~|.*\.(?:swp|swo|swx|swpx|tmp|bak|orig|kate-swp|crswap)"
    r"|.*___jb_(?:tmp|old|bak)___)$",
    re.IGNORECASE,
)


def is_editor_file(name: str) -> bool:
    """Whether the file ``name`` is hidden, or one an editor keeps beside the file it edits."""
    return bool(_EDITOR_FILE.match(name))


def is_lesson_file(path: Path) -> bool:
    """Whether ``path`` may be part of a lesson: a regular file (a FIFO or a device would block
    its reader), neither hidden nor an editor's own file."""
    return not is_editor_file(path.name) and path.is_file()


def decode_text(data: bytes) -> str:
    """A lesson file's bytes as text: UTF-8 with a byte order mark (as some editors save it)
    dropped and line ends made ``\\n``, as :meth:`Path.read_text` makes them. Raises
    :class:`UnicodeDecodeError` with offsets into ``data`` less any byte order mark."""
    text = data.removeprefix(codecs.BOM_UTF8).decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: Path, report: Report) -> str | None:
    """The text of the lesson file ``path`` (see :func:`decode_text`); ``None``, reported, when
    it cannot be read or is not UTF-8."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        report.add(path, None, f"cannot read file ({exc.strerror})")
        return None
    try:
        return decode_text(data)
    except UnicodeDecodeError as exc:
        line = data.removeprefix(codecs.BOM_UTF8)[: exc.start].count(b"\n") + 1
        report.add(path, line, "file is not valid UTF-8", "save it as UTF-8")
    return None
