"""Where templates and built assets are: inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_WEB = Path(__file__).resolve().parent
_CHECKOUT = _WEB.parent.parent


def _locate(*relative: str) -> Path:
    """The installed copy (``promptdojo/web/<relative>``) if present, else the checkout's."""
    installed = _WEB.joinpath(*relative)
    if installed.is_dir():
        return installed
    return _CHECKOUT.joinpath(*relative)


def templates_dir() -> Path:
    """Jinja2 templates."""
    return _locate("templates")


def build_dir() -> Path:
    """Front-end assets built by ``npm run build`` (hashed bundles and the Pyodide core)."""
    return _locate("static", "build")


def pyodide_core_dir() -> Path | None:
    """The pinned Pyodide core (``pyodide/<version>`` in the build), or ``None`` if not built."""
    root = build_dir() / "pyodide"
    versions = sorted(p for p in root.glob("*") if (p / "pyodide-lock.json").is_file())
    return versions[-1] if versions else None
