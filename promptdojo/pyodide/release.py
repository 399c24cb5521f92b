"""An unpacked Pyodide release served instead of the built-in core (``serve --pyodide-dir``).

Offline classrooms can unpack the full release tarball (core plus every package wheel) once and
serve it; nothing is then fetched from anywhere. Two layouts exist: current releases ship the
Emscripten loader as an ES module (``pyodide.asm.mjs``), older ones such as 0.29 as a classic script
(``pyodide.asm.js``). ``pyodide.mjs`` loads its own loader, so either layout is served as it is.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_CORE_FILES = json.loads((Path(__file__).parent / "core_files.json").read_text(encoding="utf-8"))
#: Files every release needs, whatever its layout (``core_files.json``, which the build reads too).
COMMON_FILES: tuple[str, ...] = tuple(_CORE_FILES["common"])
#: The Emscripten loader: an ES module in current releases, a classic script in older ones.
LOADERS: tuple[str, ...] = tuple(_CORE_FILES["loaders"])
RELEASE_URL = "/pyodide"
#: ``pyodide.mjs`` declares its version as a top-level string constant, e.g. ``var X="0.29.0"``.
_VERSION = re.compile(rb'var \w+="(\d+\.\d+\.\d+[\w.]*)"')
_SAFE_VERSION = re.compile(r"^\d+\.\d+\.\d+[\w.+-]*$")


class ReleaseError(ValueError):
    """The folder is not an unpacked Pyodide release; the message says what is missing."""


def release_version(path: Path) -> str | None:
    """The release's version: ``package.json`` (npm layout) first, else ``pyodide.mjs``'s constant.

    ``pyodide-lock.json`` is no guide: its ``info.version`` names the build it was made with
    (0.29.0's says ``0.28.0.dev0``).
    """
    package = path / "package.json"
    if package.is_file():
        try:
            data = json.loads(package.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            data = {}
        version = data.get("version") if data.get("name") == "pyodide" else None
        if isinstance(version, str) and _SAFE_VERSION.match(version):
            return version
    found = _VERSION.search((path / "pyodide.mjs").read_bytes())
    return found.group(1).decode() if found else None


@dataclass(frozen=True)
class Release:
    """A Pyodide release folder and the version its files declare."""

    path: Path
    version: str

    @classmethod
    def open(cls, path: Path) -> Release:
        """Check ``path`` holds a Pyodide release; raise :class:`ReleaseError` if not."""
        if not path.is_dir():
            raise ReleaseError(f"--pyodide-dir {path} is not a folder")
        missing = [name for name in COMMON_FILES if not (path / name).is_file()]
        if not any((path / name).is_file() for name in LOADERS):
            missing.append(" or ".join(LOADERS))
        if missing:
            raise ReleaseError(
                f"--pyodide-dir {path} is not an unpacked Pyodide release: it lacks "
                f"{', '.join(missing)}. Unpack pyodide-<version>.tar.bz2 from the Pyodide "
                "releases page and pass its pyodide/ folder."
            )
        version = release_version(path)
        if version is None:
            raise ReleaseError(
                f"--pyodide-dir {path}: cannot tell the Pyodide version (no package.json, and "
                "pyodide.mjs declares none); pass the pyodide/ folder of an official release."
            )
        return cls(path=path, version=version)

    @property
    def url(self) -> str:
        """Versioned URL the release is served under."""
        return f"{RELEASE_URL}/{self.version}/"
