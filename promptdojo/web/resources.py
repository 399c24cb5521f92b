"""Where the templates are: inside the wheel, or at the top of a source checkout."""

from __future__ import annotations

from pathlib import Path

_WEB = Path(__file__).resolve().parent
_CHECKOUT = _WEB.parent.parent


def templates_dir() -> Path:
    """Jinja2 templates: ``promptdojo/web/templates`` in the wheel, ``templates/`` in a checkout."""
    installed = _WEB / "templates"
    return installed if installed.is_dir() else _CHECKOUT / "templates"
