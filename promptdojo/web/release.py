"""An unpacked Pyodide release served instead of the built-in core (``serve --pyodide-dir``).

Offline classrooms can unpack the full release tarball (core plus every package wheel) once and
serve it; nothing is then fetched from anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

#: Files the browser kernel needs from a release folder.
CORE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
RELEASE_URL = "/pyodide"
_VERSION = re.compile(rb'var \w+="(\d+\.\d+\.\d+[\w.]*)"')


class ReleaseError(ValueError):
    """The folder is not an unpacked Pyodide release; the message says what is missing."""


@dataclass(frozen=True)
class Release:
    """A Pyodide release folder and the version its ``pyodide.mjs`` declares."""

    path: Path
    version: str

    @classmethod
    def open(cls, path: Path) -> Release:
        """Check ``path`` holds a Pyodide release; raise :class:`ReleaseError` if not."""
        if not path.is_dir():
            raise ReleaseError(f"--pyodide-dir {path} is not a folder")
        missing = [name for name in CORE_FILES if not (path / name).is_file()]
        if missing:
            raise ReleaseError(
                f"--pyodide-dir {path} is not an unpacked Pyodide release: it lacks "
                f"{', '.join(missing)}. Unpack pyodide-<version>.tar.bz2 from the Pyodide "
                "releases page and pass its pyodide/ folder."
            )
        found = _VERSION.search((path / "pyodide.mjs").read_bytes())
        return cls(path=path, version=found.group(1).decode() if found else path.name)

    @property
    def url(self) -> str:
        """Versioned URL the release is served under."""
        return f"{RELEASE_URL}/{self.version}/"
