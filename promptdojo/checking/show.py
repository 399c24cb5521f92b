"""``check --show``: what each visible cell printed and showed, in the terminal, as it ran.

Text is given as printed. A value is given as the page would show it: its text, or, for a
picture, its title and size (``[picture: Next-token probabilities, 520×260]``), since a
terminal cannot draw it.
"""

from __future__ import annotations

import re

from promptdojo.checking.outcome import CellOutcome, StepResult
from promptdojo.kernel import shown_as

_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_LABEL = re.compile(r"""aria-label=(["'])(.*?)\1""", re.S)
_SIZE = re.compile(r"""<svg\b[^>]*?\bwidth=["']?([\d.]+)[^>]*?\bheight=["']?([\d.]+)""", re.S)
_VIEWBOX = re.compile(r"""viewBox=["'][-\d.]+[ ,]+[-\d.]+[ ,]+([\d.]+)[ ,]+([\d.]+)""")
_ENTITIES = {"&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&amp;": "&"}


def _unescape(text: str) -> str:
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    return " ".join(text.split())


def picture(markup: str, kind: str = "picture") -> str:
    """``[picture: TITLE, W×H]`` for an SVG (or HTML) value: its title (or label) and size."""
    title = _TITLE.search(markup) or _LABEL.search(markup)
    name = _unescape(title.group(title.lastindex or 1)) if title else "untitled"
    size = _SIZE.search(markup) or _VIEWBOX.search(markup)
    dims = f", {float(size[1]):g}×{float(size[2]):g}" if size else ""
    return f"[{kind}: {name}{dims}]"


def shown(outcome: CellOutcome) -> str:
    """What a cell printed and showed, as text; ``""`` when nothing."""
    out = outcome.output
    parts = [text.rstrip("\n") for text in (out.stdout, out.stderr) if text]
    mime = shown_as(out.value)
    if mime == "image/svg+xml":
        parts.append(picture(out.value[mime]))
    elif mime == "text/html":
        parts.append(f"[HTML] {out.value.get('text/plain', '')}".rstrip())
    elif mime == "text/plain":
        parts.append(out.value[mime])
    if out.error:
        parts.append(out.error.rstrip("\n"))
    if out.truncated:
        parts.append(f"[output cut at {out.truncated:,} characters]")
    return "\n".join(parts)


def show_step(step: StepResult) -> list[str]:
    """Each visible cell of the step that ran, with its id and line, then what it showed."""
    visible = {c.id for c in step.step.cells}
    lines = []
    for outcome in step.outcomes:
        if outcome.cell_id not in visible:
            continue
        lines.append(f"── {outcome.path}:{outcome.line} cell {outcome.cell_id!r}")
        text = shown(outcome)
        if text:
            lines += ["   " + line if line else "" for line in text.splitlines()]
    return lines
