"""Serving pictures: a KV block pool coloured by owner, and lines of points (throughput
against latency, usage over time)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from promptdojo.display.svg import (
    PALETTE,
    Figure,
    axes,
    esc,
    figure,
    fmt,
    left_margin,
    legend,
    nice_max,
    svg,
    text_width,
    y_ticks,
)

_FREE = "#bab0ac"


def block_map(owners: Sequence[str | None], title: str = "KV blocks", columns: int = 32) -> Figure:
    """One square per block of a pool, coloured by the request that holds it; ``None`` is free.

    Example:
        >>> print(block_map(["a", "a", None, "b"], title="Pool"))
        Pool
          a     2 blocks
          b     1 blocks
          free  1 blocks
    """
    if not len(owners):
        raise ValueError("block_map needs at least one block")
    names = list(dict.fromkeys(o for o in owners if o is not None))
    colour = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
    cell, gap = 14, 2
    rows = -(-len(owners) // columns)
    width = max(320, 10 + columns * (cell + gap))
    height = 34 + rows * (cell + gap) + 30
    body = [f"<text x='10' y='18' font-weight='bold'>{esc(title)}</text>"]
    for i, owner in enumerate(owners):
        x, y = 10 + (i % columns) * (cell + gap), 30 + (i // columns) * (cell + gap)
        fill = _FREE if owner is None else colour[owner]
        body.append(
            f"<rect x='{x}' y='{y}' width='{cell}' height='{cell}' fill='{fill}'>"
            f"<title>block {i}: {esc(owner or 'free')}</title></rect>"
        )
    x, y = 10.0, height - 8
    for name, fill in [*colour.items(), ("free", _FREE)]:
        body.append(
            f"<rect x='{x:.1f}' y='{y - 9}' width='10' height='10' fill='{fill}'/>"
            f"<text x='{x + 14:.1f}' y='{y}'>{esc(name)}</text>"
        )
        x += 14 + text_width(name) + 16
    counts = [(n, f"{sum(o == n for o in owners)} blocks") for n in names]
    counts.append(("free", f"{sum(o is None for o in owners)} blocks"))
    held = len(owners) - sum(o is None for o in owners)
    summary = (
        f"Map of {len(owners)} KV blocks, {columns} to a row: {held} held by "
        f"{len(names)} request{'s' if len(names) != 1 else ''}, {len(owners) - held} free."
    )
    data = [(str(i), owner or "free") for i, owner in enumerate(owners)]
    return figure(
        svg(width, height, title, body), title, counts, summary, ("block", "held by"), data
    )


def line_chart(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    labels: Mapping[str, Sequence[str]] | None = None,
) -> Figure:
    """Lines through points ``(xs, ys)``, one colour per series, each point marked and, with
    ``labels``, named (a batch size beside each point, say). Both axes start at 0.

    Example:
        >>> fig = line_chart({"c": ([1, 2], [10, 30])}, title="T", labels={"c": ["a", "b"]})
        >>> print(fig)
        T
          c  a (1, 10)  b (2, 30)
    """
    if not series:
        raise ValueError("line_chart needs at least one series")
    data = {n: (np.asarray(xs, float), np.asarray(ys, float)) for n, (xs, ys) in series.items()}
    if any(x.shape != y.shape or not x.size for x, y in data.values()):
        raise ValueError("each series needs as many x values as y values, at least one")
    ticks = y_ticks(nice_max(max(float(y.max()) for _, y in data.values())))
    xmax = nice_max(max(float(x.max()) for x, _ in data.values()))
    x0 = left_margin(ticks, ylabel)
    width, height = max(460, x0 + 400), 300
    y0, x1, y1 = 34, width - 20, height - 66

    def y_of(v: float) -> float:
        return y1 - (y1 - y0) * v / ticks[-1][0]

    def x_of(v: float) -> float:
        return x0 + (x1 - x0) * v / xmax

    body = [f"<text x='{x0}' y='18' font-weight='bold'>{esc(title)}</text>"]
    body += axes((x0, y0, x1, y1), ticks, y_of, ylabel, xlabel)
    for v in (0.0, xmax / 2, xmax):
        body.append(f"<text x='{x_of(v):.1f}' y='{y1 + 16}' text-anchor='middle'>{fmt(v)}</text>")
    rows = []
    for i, (name, (xs, ys)) in enumerate(data.items()):
        c = PALETTE[i % len(PALETTE)]
        points = " ".join(f"{x_of(x):.1f},{y_of(y):.1f}" for x, y in zip(xs, ys, strict=True))
        body.append(f"<polyline points='{points}' fill='none' stroke='{c}' stroke-width='2'/>")
        names = list((labels or {}).get(name, []))
        for j, (x, y) in enumerate(zip(xs, ys, strict=True)):
            body.append(f"<circle cx='{x_of(x):.1f}' cy='{y_of(y):.1f}' r='3.5' fill='{c}'/>")
            if j < len(names):
                body.append(
                    f"<text x='{x_of(x) + 5:.1f}' y='{y_of(y) - 6:.1f}'>{esc(names[j])}</text>"
                )
        rows.append(
            (
                name,
                "  ".join(
                    (f"{names[j]} " if j < len(names) else "") + f"({fmt(x)}, {fmt(y)})"
                    for j, (x, y) in enumerate(zip(xs, ys, strict=True))
                ),
            )
        )
    body += legend(list(data), float(x0), height - 8)
    summary, columns, cells = _line_words(data, labels, xlabel, ylabel)
    return figure(svg(width, height, title, body), title, rows, summary, columns, cells)


def _line_words(
    data: dict[str, tuple[np.ndarray, np.ndarray]],
    labels: Mapping[str, Sequence[str]] | None,
    xlabel: str,
    ylabel: str,
) -> tuple[str, tuple, list]:
    """A line chart's summary, and its table's columns and rows (a row per point)."""
    summary = (
        f"Line chart of {len(data)} series ({', '.join(data)}) over {xlabel or 'x'}: "
        + "; ".join(
            f"{name} from ({fmt(xs[0])}, {fmt(ys[0])}) to ({fmt(xs[-1])}, {fmt(ys[-1])})"
            for name, (xs, ys) in data.items()
        )
        + "."
    )
    cells = []
    for name, (xs, ys) in data.items():
        named = list((labels or {}).get(name, []))
        for j, (x, y) in enumerate(zip(xs, ys, strict=True)):
            point = (named[j] if j < len(named) else "-",) if labels else ()
            cells.append((name, *point, fmt(x), fmt(y)))
    columns = ("series", *(("point",) if labels else ()), xlabel or "x", ylabel or "y")
    return summary, columns, cells
