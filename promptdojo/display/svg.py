"""The drawing kit under the pictures: a figure type, escaping, axes, and a viewBox that fits.

Text in SVG has no size until a browser lays it out, so :func:`text_box` estimates it (a
conservative average glyph width for the lesson font) and :func:`svg` widens the viewBox until every
label fits: a long title or a wide tick label makes the picture a little smaller, never clipped.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Mid-tone colours that keep their contrast on white and on near-black.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948")
FONT_SIZE = 12
FONT = f"font-family='system-ui, sans-serif' font-size='{FONT_SIZE}'"
#: Average advance of one glyph, in font sizes: generous for system-ui (digits are about 0.55).
CHAR_WIDTH = {"normal": 0.62, "bold": 0.68}
#: Inline or as an image, the picture picks its ink from the reader's light or dark theme.
_THEME = "<style>svg{color:#1d1f24}@media (prefers-color-scheme: dark){svg{color:#e6e6e3}}</style>"


@dataclass(frozen=True)
class Figure:
    """An SVG picture plus its words: a text rendering of its data, a title, a one-line summary,
    and the data as rows under two column headings (``_repr_figure_``, for screen readers)."""

    svg: str
    text: str
    title: str = ""
    summary: str = ""
    rows: tuple[tuple[str, ...], ...] = ()
    columns: tuple[str, ...] = ("", "value")

    def _repr_svg_(self) -> str:
        return self.svg

    def _repr_figure_(self) -> str:
        """The words as JSON (``promptdojo.kernel.FIGURE_MIME``)."""
        return json.dumps(
            {
                "title": self.title or "chart",
                "summary": self.summary,
                "columns": list(self.columns),
                "rows": [list(row) for row in self.rows],
            }
        )

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


#: What ``html.escape(text, quote=True)`` replaces, ``&`` first. Importing ``html`` would load its
#: table of over 2,000 named entities, a noticeable wait in Pyodide, for five replacements.
_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;"))


def esc(value: object) -> str:
    """``value`` as text safe inside an SVG element or attribute."""
    text = str(value)
    for char, entity in _ESCAPES:
        text = text.replace(char, entity)
    return text


def fmt(value: float) -> str:
    """A short number for a tick or a table: 4 significant digits, ``3.37e+06`` when large."""
    if value == 0:
        return "0"
    if abs(value) >= 1e4 or abs(value) < 1e-3:
        return f"{value:.3g}"
    return f"{value:.4g}"


def nice_max(value: float) -> float:
    """The first of 1, 2, 2.5, 5, 10 times a power of ten that is at least ``value``."""
    if value <= 0:
        return 1.0
    exponent = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * exponent:
            return step * exponent
    return 10 * exponent  # pragma: no cover


def text_width(text: str, weight: str = "normal") -> float:
    """Estimated width in pixels of ``text`` (already escaped or not) at the lesson font size."""
    plain = re.sub(r"&[#\w]+;", "x", text)
    return len(plain) * CHAR_WIDTH[weight] * FONT_SIZE


_TEXT = re.compile(r"<text ([^>]*)>(.*?)</text>", re.S)
_ATTR = re.compile(r"([\w-]+)='([^']*)'")


def text_box(attrs: dict[str, str], content: str) -> tuple[float, float, float, float]:
    """``(left, top, right, bottom)`` of one ``<text>`` element, rotation included."""
    length = text_width(content, "bold" if attrs.get("font-weight") == "bold" else "normal")
    start = {"middle": -length / 2, "end": -length}.get(attrs.get("text-anchor", "start"), 0.0)
    x, y, angle = float(attrs.get("x", 0)), float(attrs.get("y", 0)), 0.0
    moved = re.search(r"translate\(([-\d.]+)[ ,]+([-\d.]+)\)", attrs.get("transform", ""))
    turned = re.search(r"rotate\(([-\d.]+)\)", attrs.get("transform", ""))
    if moved:
        x, y = x + float(moved.group(1)), y + float(moved.group(2))
    if turned:
        angle = math.radians(float(turned.group(1)))
    cos, sin = math.cos(angle), math.sin(angle)
    corners = [
        (x + u * cos - v * sin, y + u * sin + v * cos)
        for u in (start, start + length)
        for v in (-0.8 * FONT_SIZE, 0.25 * FONT_SIZE)
    ]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return min(xs), min(ys), max(xs), max(ys)


def svg(width: float, height: float, title: str, body: list[str]) -> str:
    """The whole picture, its viewBox grown to hold every label of ``body``."""
    left, top, right, bottom = 0.0, 0.0, float(width), float(height)
    for match in _TEXT.finditer("".join(body)):
        box = text_box(dict(_ATTR.findall(match.group(1))), match.group(2))
        left, top = min(left, box[0] - 4), min(top, box[1] - 4)
        right, bottom = max(right, box[2] + 4), max(bottom, box[3] + 4)
    w, h = math.ceil(right - left), math.ceil(bottom - top)
    label = esc(title or "chart")
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='{left:.0f} {top:.0f} {w} {h}' "
        f"width='{w}' height='{h}' role='img' aria-label='{label}' {FONT} "
        f"fill='currentColor' style='max-width:100%;height:auto'>"
        f"<title>{label}</title>{_THEME}" + "".join(body) + "</svg>"
    )


def figure(
    picture: str,
    title: str,
    rows: Sequence[tuple[str, str]],
    summary: str,
    columns: tuple[str, ...] = ("", "value"),
    data: Sequence[tuple[str, ...]] | None = None,
) -> Figure:
    """A :class:`Figure` of the SVG ``picture``: ``rows`` its text rendering, ``data`` its table
    under ``columns`` (``rows`` when not given), ``summary`` one line of what it shows."""
    cells = tuple(tuple(row) for row in (rows if data is None else data))
    return Figure(picture, table(title, rows), title, summary, cells, columns)


def table(title: str, rows: Sequence[tuple[str, str]]) -> str:
    """The figure's numbers as aligned text, for ``repr`` and terminals."""
    width = max((len(k) for k, _ in rows), default=0)
    lines = [title] if title else []
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]
    return "\n".join(lines)


def y_ticks(top: float, log_floor: float | None = None) -> list[tuple[float, str]]:
    """Five linear ticks from 0 to ``top``, or one per power of ten from ``log_floor`` up."""
    if log_floor is None:
        return [(top * i / 4, fmt(top * i / 4)) for i in range(5)]
    low, high = math.floor(log_floor), math.ceil(math.log10(top))
    return [(10.0**e, fmt(10.0**e)) for e in range(low, high + 1)]


def left_margin(ticks: Sequence[tuple[float, str]], ylabel: str) -> int:
    """Room left of the y axis for the tick labels and, beside them, the rotated axis label."""
    widest = max(text_width(label) for _, label in ticks)
    return int(10 + widest + (FONT_SIZE + 10 if ylabel else 0))


def axes(
    box: tuple[int, int, int, int],
    ticks: Sequence[tuple[float, str]],
    y_of: object,
    ylabel: str,
    xlabel: str,
) -> list[str]:
    """Axis lines, ticks at ``y_of(value)``, and axis labels that keep clear of the tick labels."""
    x0, y0, x1, y1 = box
    parts = [
        f"<line x1='{x0}' y1='{y1}' x2='{x1}' y2='{y1}' stroke='currentColor'/>",
        f"<line x1='{x0}' y1='{y0}' x2='{x0}' y2='{y1}' stroke='currentColor'/>",
    ]
    for value, label in ticks:
        y = y_of(value)  # type: ignore[operator]
        parts.append(
            f"<line x1='{x0 - 4}' y1='{y:.1f}' x2='{x0}' y2='{y:.1f}' stroke='currentColor'/>"
            f"<text x='{x0 - 6}' y='{y + 4:.1f}' text-anchor='end'>{esc(label)}</text>"
        )
    if ylabel:
        widest = max(text_width(label) for _, label in ticks)
        x = x0 - 10 - widest - 6
        parts.append(
            f"<text transform='translate({x:.0f} {(y0 + y1) / 2:.0f}) rotate(-90)' "
            f"text-anchor='middle'>{esc(ylabel)}</text>"
        )
    if xlabel:
        parts.append(
            f"<text x='{(x0 + x1) / 2:.0f}' y='{y1 + 34}' text-anchor='middle'>{esc(xlabel)}</text>"
        )
    return parts


def legend(names: Sequence[str], x: float, y: float) -> list[str]:
    """One row of colour keys, left to right from ``(x, y)``."""
    parts = []
    for i, name in enumerate(names):
        parts.append(
            f"<rect x='{x:.1f}' y='{y - 9}' width='10' height='10' "
            f"fill='{PALETTE[i % len(PALETTE)]}'/><text x='{x + 14:.1f}' y='{y}'>{esc(name)}</text>"
        )
        x += 14 + text_width(name) + 16
    return parts
