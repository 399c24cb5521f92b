"""Memory pictures: byte counts against a limit, and cache size as the context grows."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from promptdojo.display.svg import PALETTE, Figure, esc, figure, svg
from promptdojo.kvmemory import format_bytes


def memory_bars(
    sizes: Mapping[str, float], title: str = "KV cache memory", limit: float | None = None
) -> Figure:
    """Horizontal bars of byte counts in human units, with an optional limit line (e.g. GPU RAM).

    Example:
        >>> print(memory_bars({"8k": 2**30, "32k": 2**32}))
        KV cache memory
          8k   1.00 GiB
          32k  4.00 GiB
    """

    if not sizes:
        raise ValueError("memory_bars needs at least one entry")
    names, values = list(sizes), np.array([float(v) for v in sizes.values()])
    top = max(float(values.max()), limit or 0.0)
    width, row = 520, 26
    x0, x1 = 150, width - 90
    height = 40 + row * len(names) + (24 if limit else 8)
    body = [f"<text x='10' y='18' font-weight='bold'>{esc(title)}</text>"]
    for i, (name, value) in enumerate(zip(names, values, strict=True)):
        y = 32 + i * row
        w = (x1 - x0) * value / top if top else 0
        over = limit is not None and value > limit
        body.append(
            f"<text x='{x0 - 8}' y='{y + 15}' text-anchor='end'>{esc(name)}</text>"
            f"<rect x='{x0}' y='{y}' width='{w:.1f}' height='{row - 6}' "
            f"fill='{PALETTE[3] if over else PALETTE[0]}'/>"
            f"<text x='{x0 + w + 6:.1f}' y='{y + 15}'>{format_bytes(value)}</text>"
        )
    if limit is not None:
        x = x0 + (x1 - x0) * limit / top
        bottom = 32 + row * len(names)
        body.append(
            f"<line x1='{x:.1f}' y1='26' x2='{x:.1f}' y2='{bottom}' stroke='currentColor' "
            f"stroke-dasharray='4 3'/><text x='{x:.1f}' y='{bottom + 16}' text-anchor='middle'>"
            f"limit {format_bytes(limit)}</text>"
        )
    rows = [(n, format_bytes(v)) for n, v in zip(names, values, strict=True)]
    if limit is not None:
        rows.append(("limit", format_bytes(limit)))
    largest = int(values.argmax())
    over = [n for n, v in zip(names, values, strict=True) if limit is not None and v > limit]
    summary = (
        f"Bar chart of memory for {len(names)} items: the largest {names[largest]} at "
        f"{format_bytes(values[largest])}"
        + (f"; limit {format_bytes(limit)}" if limit is not None else "")
        + (f", which {', '.join(over)} exceed" if over else "")
        + "."
    )
    return figure(svg(width, height, title, body), title, rows, summary, ("item", "memory"))


def kv_cache_growth(
    bytes_per_token: Mapping[str, float],
    max_tokens: int,
    title: str = "KV cache size as the context grows",
    contexts: Mapping[str, int] | None = None,
) -> Figure:
    """Lines of cache size against context length, one per model (bytes per token × tokens).

    ``contexts`` gives a model's own context length: its line stops there (marked with a dot)
    instead of running on to ``max_tokens``.

    Example:
        >>> print(kv_cache_growth({"Llama-3-8B": 131072}, 32768, contexts={"Llama-3-8B": 8192}))
        KV cache size as the context grows
          Llama-3-8B  128.00 KiB/token, 1.00 GiB at 8,192 (its context)
    """

    if not bytes_per_token or max_tokens < 1:
        raise ValueError("kv_cache_growth needs at least one model and max_tokens >= 1")
    ends = {
        name: min(max_tokens, int((contexts or {}).get(name, max_tokens)))
        for name in bytes_per_token
    }
    width, height = 500, 280
    x0, y0, x1, y1 = 80, 34, width - 130, height - 46
    top = max(bytes_per_token[n] * ends[n] for n in bytes_per_token)
    body = [f"<text x='{x0}' y='18' font-weight='bold'>{esc(title)}</text>"]
    body += [
        f"<line x1='{x0}' y1='{y1}' x2='{x1}' y2='{y1}' stroke='currentColor'/>",
        f"<line x1='{x0}' y1='{y0}' x2='{x0}' y2='{y1}' stroke='currentColor'/>",
        f"<text x='{(x0 + x1) / 2}' y='{y1 + 34}' text-anchor='middle'>context (tokens)</text>",
        f"<text x='{x0}' y='{y1 + 16}' text-anchor='middle'>0</text>",
        f"<text x='{x1}' y='{y1 + 16}' text-anchor='middle'>{max_tokens:,}</text>",
        f"<text x='{x0 - 6}' y='{y0 + 4}' text-anchor='end'>{format_bytes(top)}</text>",
    ]
    rows = []
    for i, (name, per_token) in enumerate(bytes_per_token.items()):
        end = per_token * ends[name]
        x = x0 + (x1 - x0) * ends[name] / max_tokens
        y = y1 - (y1 - y0) * end / top
        colour = PALETTE[i % len(PALETTE)]
        body.append(
            f"<line x1='{x0}' y1='{y1}' x2='{x:.1f}' y2='{y:.1f}' stroke='{colour}' "
            f"stroke-width='3'/><text x='{x + 6:.1f}' y='{y + 4:.1f}'>{esc(name)}</text>"
        )
        stop = ""
        if ends[name] < max_tokens:
            body.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='4' fill='{colour}'/>")
            stop = " (its context)"
        rows.append(
            (name, f"{format_bytes(per_token)}/token, {format_bytes(end)} at {ends[name]:,}{stop}")
        )
    biggest = max(bytes_per_token, key=lambda n: bytes_per_token[n] * ends[n])
    summary = (
        f"Line chart of KV cache size against context length, 0 to {max_tokens:,} tokens, for "
        f"{len(bytes_per_token)} model(s): the largest is {biggest} at "
        f"{format_bytes(bytes_per_token[biggest] * ends[biggest])}."
    )
    return figure(svg(width, height, title, body), title, rows, summary, ("model", "cache"))
