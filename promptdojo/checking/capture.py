"""A cell's captured output: stdout and stderr together, cut at the browser's cap.

Runs inside Pyodide too (``check --pyodide``): standard library only.
"""

from __future__ import annotations

import io

from promptdojo.kernel import OUTPUT_CAP


class CappedOutput:
    """A cell's stdout and stderr, together at most ``cap`` characters: the browser's rule."""

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        self.cap = cap
        self.kept = 0
        self.truncated = False
        self.parts: dict[str, list[str]] = {"stdout": [], "stderr": []}

    def stream(self, name: str) -> io.TextIOBase:
        """A file-like object for ``name`` (``stdout`` or ``stderr``)."""
        return _Stream(self, name)

    def write(self, name: str, text: str) -> None:
        if self.truncated:
            return
        room = self.cap - self.kept
        if len(text) > room:
            text, self.truncated = text[:room], True
        self.parts[name].append(text)
        self.kept += len(text)

    def text(self, name: str) -> str:
        return "".join(self.parts[name])


class _Stream(io.TextIOBase):
    """One of a cell's two output streams, writing into its :class:`CappedOutput`."""

    def __init__(self, output: CappedOutput, name: str) -> None:
        super().__init__()
        self.output, self.name = output, name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.output.write(self.name, text)
        return len(text)
