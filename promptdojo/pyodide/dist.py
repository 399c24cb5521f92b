"""Where the built Pyodide core is: inside the wheel, or in a source checkout's front-end build.

``npm run build`` copies the pinned core to ``static/build/pyodide/<version>/``; the wheel carries
that folder as ``promptdojo/web/static/build``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
_CHECKOUT = _PACKAGE.parent


class PyodideUnavailableError(RuntimeError):
    """Node or the Pyodide core is missing; the message says how to get it."""


def build_dir() -> Path:
    """Front-end assets built by ``npm run build`` (hashed bundles and the Pyodide core)."""
    installed = _PACKAGE / "web" / "static" / "build"
    return installed if installed.is_dir() else _CHECKOUT / "static" / "build"


def pyodide_core_dir() -> Path | None:
    """The pinned Pyodide core (``pyodide/<version>`` in the build), or ``None`` if not built."""
    root = build_dir() / "pyodide"
    versions = sorted(p for p in root.glob("*") if (p / "pyodide-lock.json").is_file())
    return versions[-1] if versions else None


def core_dir() -> Path:
    """The Pyodide core the server ships; raise :class:`PyodideUnavailableError` if not built."""
    core = pyodide_core_dir()
    if core is None:
        raise PyodideUnavailableError(
            f"{build_dir()} holds no Pyodide core: build the front end first (`make build`)"
        )
    return core
