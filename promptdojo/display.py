"""Pictures for lessons, drawn as plain SVG: no JavaScript, no matplotlib.

Every function returns a :class:`Figure`. A notebook-style front end shows it through
``_repr_svg_``; ``repr()`` gives a small text table of the same numbers, so a terminal (or a test)
sees the data too. Text and axes use ``currentColor`` and the bar colours are mid-tones, so a
picture reads on light and dark pages alike.

Example:
    >>> fig = bars({"the": 0.6, "a": 0.25, "one": 0.15}, title="Next token", ylabel="probability")
    >>> fig._repr_svg_().startswith("<svg")
    True
    >>> print(fig)
    Next token
      the  0.6
      a    0.25
      one  0.15
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "Figure",
    "attention_heatmap",
    "bars",
    "compare_distributions",
    "error_histogram",
    "grouped_bars",
    "kv_cache_growth",
    "memory_bars",
]

#: Mid-tone colours that keep their contrast on white and on near-black.
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948")
FONT = "font-family='system-ui, sans-serif' font-size='12'"
#: Inline or as an image, the picture picks its ink from the reader's light or dark theme.
_THEME = "<style>svg{color:#1d1f24}@media (prefers-color-scheme: dark){svg{color:#e6e6e3}}</style>"


@dataclass(frozen=True)
class Figure:
    """An SVG picture plus a text rendering of its data."""

    svg: str
    text: str
    title: str = ""

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


#: What ``html.escape(text, quote=True)`` replaces, ``&`` first. Importing ``html`` would load its
#: table of over 2,000 named entities, a noticeable wait in Pyodide, for five replacements.
_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;"))


def _esc(value: object) -> str:
    text = str(value)
    for char, entity in _ESCAPES:
        text = text.replace(char, entity)
    return text


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e4 or abs(value) < 1e-3:
        return f"{value:.3g}"
    return f"{value:.4g}"


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    exponent = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * exponent:
            return step * exponent
    return 10 * exponent  # pragma: no cover


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    label = _esc(title or "chart")
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
        f"width='{width}' height='{height}' role='img' aria-label='{label}' {FONT} "
        f"fill='currentColor' style='max-width:100%;height:auto'>"
        f"<title>{label}</title>{_THEME}" + "".join(body) + "</svg>"
    )


def _table(title: str, rows: Sequence[tuple[str, str]]) -> str:
    width = max((len(k) for k, _ in rows), default=0)
    lines = [title] if title else []
    lines += [f"  {k.ljust(width)}  {v}" for k, v in rows]
    return "\n".join(lines)


def _axes(x0: int, y0: int, x1: int, y1: int, ymax: float, ylabel: str, xlabel: str) -> list[str]:
    parts = [
        f"<line x1='{x0}' y1='{y1}' x2='{x1}' y2='{y1}' stroke='currentColor'/>",
        f"<line x1='{x0}' y1='{y0}' x2='{x0}' y2='{y1}' stroke='currentColor'/>",
    ]
    for i in range(5):
        value = ymax * i / 4
        y = y1 - (y1 - y0) * i / 4
        parts.append(
            f"<line x1='{x0 - 4}' y1='{y:.1f}' x2='{x0}' y2='{y:.1f}' stroke='currentColor'/>"
            f"<text x='{x0 - 6}' y='{y + 4:.1f}' text-anchor='end'>{_fmt(value)}</text>"
        )
    if ylabel:
        mid = (y0 + y1) / 2
        parts.append(
            f"<text transform='translate(14 {mid:.0f}) rotate(-90)' text-anchor='middle'>"
            f"{_esc(ylabel)}</text>"
        )
    if xlabel:
        parts.append(
            f"<text x='{(x0 + x1) / 2:.0f}' y='{y1 + 34}' text-anchor='middle'>"
            f"{_esc(xlabel)}</text>"
        )
    return parts


def grouped_bars(
    series: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
) -> Figure:
    """Vertical bars, one group per label and one colour per series, with a legend.

    Example:
        >>> fig = grouped_bars({"T=1": [0.6, 0.4], "T=0.2": [0.9, 0.1]}, ["the", "a"])
        >>> fig.svg.count("<rect")
        6
    """
    names = list(series)
    if not names or not len(labels):
        raise ValueError("grouped_bars needs at least one series and one label")
    values = np.array([np.asarray(series[n], dtype=float) for n in names])
    if values.shape[1] != len(labels):
        raise ValueError(f"every series needs {len(labels)} values, one per label")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite")
    width, height = max(320, 70 + len(labels) * (18 * len(names) + 14)), 260
    x0, y0, x1, y1 = 60, 34, width - 10, height - 46
    ymax = _nice_max(float(values.max()))
    body = [f"<text x='{x0}' y='18' font-weight='bold'>{_esc(title)}</text>"]
    body += _axes(x0, y0, x1, y1, ymax, ylabel, xlabel)
    slot = (x1 - x0) / len(labels)
    bar = min(28.0, (slot - 8) / len(names))
    for j, label in enumerate(labels):
        left = x0 + j * slot + (slot - bar * len(names)) / 2
        for i, name in enumerate(names):
            h = (y1 - y0) * max(values[i, j], 0) / ymax
            body.append(
                f"<rect x='{left + i * bar:.1f}' y='{y1 - h:.1f}' width='{bar - 2:.1f}' "
                f"height='{h:.1f}' fill='{PALETTE[i % len(PALETTE)]}'>"
                f"<title>{_esc(name)} · {_esc(label)}: {_fmt(values[i, j])}</title></rect>"
            )
        body.append(
            f"<text x='{x0 + (j + 0.5) * slot:.1f}' y='{y1 + 16}' text-anchor='middle'>"
            f"{_esc(label)}</text>"
        )
    if len(names) > 1:
        for i, name in enumerate(names):
            x = x1 - 110
            y = y0 + 4 + 16 * i
            body.append(
                f"<rect x='{x}' y='{y - 9}' width='10' height='10' "
                f"fill='{PALETTE[i % len(PALETTE)]}'/>"
                f"<text x='{x + 14}' y='{y}'>{_esc(name)}</text>"
            )
    rows = [
        (str(label), "  ".join(f"{n}={_fmt(values[i, j])}" for i, n in enumerate(names)))
        for j, label in enumerate(labels)
    ]
    if len(names) == 1:
        rows = [(str(label), _fmt(values[0, j])) for j, label in enumerate(labels)]
    return Figure(_svg(width, height, title, body), _table(title, rows), title)


def bars(
    values: Mapping[str, float], title: str = "", xlabel: str = "", ylabel: str = ""
) -> Figure:
    """One bar per key: probabilities, draw counts, perplexities.

    Example:
        >>> print(bars({"int8": 4.1, "int4": 5.3}, title="Perplexity"))
        Perplexity
          int8  4.1
          int4  5.3
    """
    return grouped_bars(
        {ylabel or "value": list(values.values())},
        [str(k) for k in values],
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
    )


def compare_distributions(
    distributions: Mapping[str, Sequence[float]], labels: Sequence[str], title: str = ""
) -> Figure:
    """Probability bars of one vocabulary under several settings (raw, temperature, top-k, …).

    Example:
        >>> fig = compare_distributions({"T=1": [0.6, 0.4], "T=0.5": [0.7, 0.3]}, ["the", "a"])
        >>> fig.title
        'Next-token probabilities'
    """
    return grouped_bars(
        distributions, labels, title=title or "Next-token probabilities", ylabel="probability"
    )


def error_histogram(errors: object, bins: int = 30, title: str = "Quantization error") -> Figure:
    """Histogram of per-weight errors ``w_hat - w``.

    Example:
        >>> fig = error_histogram(np.linspace(-0.5, 0.5, 101), bins=4)
        >>> fig.svg.count("<rect")
        4
    """
    data = np.asarray(errors, dtype=float).ravel()
    if data.size == 0 or not np.isfinite(data).all():
        raise ValueError("errors must be a non-empty array of finite numbers")
    counts, edges = np.histogram(data, bins=bins)
    width, height = 460, 260
    x0, y0, x1, y1 = 60, 34, width - 10, height - 46
    ymax = _nice_max(float(counts.max()))
    body = [f"<text x='{x0}' y='18' font-weight='bold'>{_esc(title)}</text>"]
    body += _axes(x0, y0, x1, y1, ymax, "weights", "error (restored − original)")
    span = (x1 - x0) / bins
    for i, count in enumerate(counts):
        h = (y1 - y0) * count / ymax
        body.append(
            f"<rect x='{x0 + i * span:.1f}' y='{y1 - h:.1f}' width='{max(span - 1, 1):.1f}' "
            f"height='{h:.1f}' fill='{PALETTE[0]}'><title>{_fmt(edges[i])} to "
            f"{_fmt(edges[i + 1])}: {count}</title></rect>"
        )
    for edge, anchor in ((edges[0], x0), (edges[-1], x1)):
        body.append(f"<text x='{anchor}' y='{y1 + 16}' text-anchor='middle'>{_fmt(edge)}</text>")
    text = _table(
        title,
        [
            ("weights", str(data.size)),
            ("range", f"{_fmt(edges[0])} .. {_fmt(edges[-1])}"),
            ("max |error|", _fmt(float(np.abs(data).max()))),
        ],
    )
    return Figure(_svg(width, height, title, body), text, title)


def attention_heatmap(
    weights: object, tokens: Sequence[str], title: str = "Attention weights"
) -> Figure:
    """A query × key grid of attention weights; darker is more attention. Masked cells are blank.

    Example:
        >>> w = np.array([[1.0, 0.0], [0.3, 0.7]])
        >>> attention_heatmap(w, ["a", "b"]).svg.count("<rect")
        3
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[0] != len(tokens) or w.shape[1] != len(tokens):
        raise ValueError(f"weights must be square over the {len(tokens)} tokens, got {w.shape}")
    n = len(tokens)
    cell = max(12, min(28, 360 // max(n, 1)))
    x0, y0 = 70, 40
    width, height = x0 + n * cell + 20, y0 + n * cell + 50
    body = [f"<text x='10' y='18' font-weight='bold'>{_esc(title)}</text>"]
    for i in range(n):
        body.append(
            f"<text x='{x0 - 6}' y='{y0 + i * cell + cell * 0.7:.1f}' text-anchor='end'>"
            f"{_esc(repr(tokens[i])[1:-1])}</text>"
        )
        body.append(
            f"<text transform='translate({x0 + i * cell + cell * 0.65:.1f} {y0 + n * cell + 6}) "
            f"rotate(60)'>{_esc(repr(tokens[i])[1:-1])}</text>"
        )
        for j in range(n):
            if w[i, j] <= 0:
                continue
            body.append(
                f"<rect x='{x0 + j * cell}' y='{y0 + i * cell}' width='{cell - 1}' "
                f"height='{cell - 1}' fill='{PALETTE[0]}' fill-opacity='{min(1.0, w[i, j]):.3f}'>"
                f"<title>{_esc(tokens[i])} → {_esc(tokens[j])}: {w[i, j]:.3f}</title></rect>"
            )
    body.append(f"<text x='{x0}' y='{y0 - 8}'>keys →   (rows: queries)</text>")
    strongest = [
        (repr(tokens[i]), f"attends most to {tokens[int(w[i].argmax())]!r}") for i in range(n)
    ]
    return Figure(_svg(width, height, title, body), _table(title, strongest), title)


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
    from promptdojo.kvcache import format_bytes

    if not sizes:
        raise ValueError("memory_bars needs at least one entry")
    names, values = list(sizes), np.array([float(v) for v in sizes.values()])
    top = max(float(values.max()), limit or 0.0)
    width, row = 520, 26
    x0, x1 = 150, width - 90
    height = 40 + row * len(names) + (24 if limit else 8)
    body = [f"<text x='10' y='18' font-weight='bold'>{_esc(title)}</text>"]
    for i, (name, value) in enumerate(zip(names, values, strict=True)):
        y = 32 + i * row
        w = (x1 - x0) * value / top if top else 0
        over = limit is not None and value > limit
        body.append(
            f"<text x='{x0 - 8}' y='{y + 15}' text-anchor='end'>{_esc(name)}</text>"
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
    return Figure(_svg(width, height, title, body), _table(title, rows), title)


def kv_cache_growth(
    bytes_per_token: Mapping[str, float],
    max_tokens: int,
    title: str = "KV cache size as the context grows",
) -> Figure:
    """Lines of cache size against context length, one per model (bytes per token × tokens).

    Example:
        >>> print(kv_cache_growth({"Llama-3-8B": 131072}, 32768))
        KV cache size as the context grows
          Llama-3-8B  128.00 KiB/token, 4.00 GiB at 32,768
    """
    from promptdojo.kvcache import format_bytes

    if not bytes_per_token or max_tokens < 1:
        raise ValueError("kv_cache_growth needs at least one model and max_tokens >= 1")
    width, height = 500, 280
    x0, y0, x1, y1 = 80, 34, width - 130, height - 46
    top = max(bytes_per_token.values()) * max_tokens
    body = [f"<text x='{x0}' y='18' font-weight='bold'>{_esc(title)}</text>"]
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
        end = per_token * max_tokens
        y = y1 - (y1 - y0) * end / top
        colour = PALETTE[i % len(PALETTE)]
        body.append(
            f"<line x1='{x0}' y1='{y1}' x2='{x1}' y2='{y:.1f}' stroke='{colour}' stroke-width='3'/>"
            f"<text x='{x1 + 6}' y='{y + 4:.1f}'>{_esc(name)}</text>"
        )
        rows.append(
            (name, f"{format_bytes(per_token)}/token, {format_bytes(end)} at {max_tokens:,}")
        )
    return Figure(_svg(width, height, title, body), _table(title, rows), title)
