"""Bar charts, histograms and attention heatmaps."""

from __future__ import annotations

import math
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
    y_ticks,
)


def grouped_bars(
    series: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    log: bool = False,
) -> Figure:
    """Vertical bars, one group per label and one colour per series, with a legend.

    ``log=True`` draws the y axis in powers of ten, so values a hundred times apart both show.

    Example:
        >>> fig = grouped_bars({"T=1": [0.6, 0.4], "T=0.2": [0.9, 0.1]}, ["the", "a"])
        >>> fig.svg.count("<rect")
        6
    """
    names, values = _bar_values(series, labels, log)
    if log:
        floor = math.floor(math.log10(float(values.min())))
        ticks = y_ticks(float(values.max()), log_floor=floor)
        low, high = math.log10(ticks[0][0]), math.log10(ticks[-1][0])
    else:
        ticks = y_ticks(nice_max(float(values.max())))
    x0 = left_margin(ticks, ylabel)
    width = max(320, x0 + 20 + len(labels) * (18 * len(names) + 14))
    key_height = 20 if len(names) > 1 else 0  # a legend's row, for more than one series
    height = 260 + key_height
    y0, x1, y1 = 34, width - 10, height - 46 - key_height
    plot = y1 - y0

    def y_of(v: float) -> float:
        if log:
            return y1 - plot * (math.log10(max(v, ticks[0][0])) - low) / (high - low)
        return y1 - plot * max(v, 0) / ticks[-1][0]

    body = [f"<text x='{x0}' y='18' font-weight='bold'>{esc(title)}</text>"]
    body += axes((x0, y0, x1, y1), ticks, y_of, ylabel, xlabel)
    slot = (x1 - x0) / len(labels)
    bar = min(28.0, (slot - 8) / len(names))
    for j, label in enumerate(labels):
        left = x0 + j * slot + (slot - bar * len(names)) / 2
        for i, name in enumerate(names):
            top = y_of(values[i, j])
            body.append(
                f"<rect x='{left + i * bar:.1f}' y='{top:.1f}' width='{bar - 2:.1f}' "
                f"height='{y1 - top:.1f}' fill='{PALETTE[i % len(PALETTE)]}'>"
                f"<title>{esc(name)} · {esc(label)}: {fmt(values[i, j])}</title></rect>"
            )
        body.append(
            f"<text x='{x0 + (j + 0.5) * slot:.1f}' y='{y1 + 16}' text-anchor='middle'>"
            f"{esc(label)}</text>"
        )
    if key_height:
        body += legend(names, x0, height - 10)
    rows, summary, columns, data = _bar_words(names, values, labels, log, (xlabel, ylabel))
    return figure(svg(width, height, title, body), title, rows, summary, columns, data)


def _bar_values(
    series: Mapping[str, Sequence[float]], labels: Sequence[str], log: bool
) -> tuple[list[str], np.ndarray]:
    """The series' names and their values as one array (a row per series), checked."""
    names = list(series)
    if not names or not len(labels):
        raise ValueError("grouped_bars needs at least one series and one label")
    values = np.array([np.asarray(series[n], dtype=float) for n in names])
    if values.shape[1] != len(labels):
        raise ValueError(f"every series needs {len(labels)} values, one per label")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite")
    if log and not (values > 0).all():
        raise ValueError("a log axis needs every value > 0")
    return names, values


def _bar_words(
    names: list[str],
    values: np.ndarray,
    labels: Sequence[str],
    log: bool,
    axis_labels: tuple[str, str],
) -> tuple[list, str, tuple, list]:
    """A bar chart's words (:func:`figure`'s rows, summary, table columns and table data)."""
    xlabel, ylabel = axis_labels
    rows = [
        (str(label), "  ".join(f"{n}={fmt(values[i, j])}" for i, n in enumerate(names)))
        for j, label in enumerate(labels)
    ]
    if len(names) == 1:
        rows = [(str(label), fmt(values[0, j])) for j, label in enumerate(labels)]
    i, j = np.unravel_index(int(values.argmax()), values.shape)
    k, m = np.unravel_index(int(values.argmin()), values.shape)
    series = f" in {len(names)} series ({', '.join(names)})" if len(names) > 1 else ""
    which = (
        (lambda a, b: f"{labels[b]} ({names[a]})") if len(names) > 1 else (lambda a, b: labels[b])
    )
    summary = (
        f"Bar chart of {len(labels)} labels{series}{', log scale' if log else ''}: highest "
        f"{which(i, j)} at {fmt(values[i, j])}, lowest {which(k, m)} at {fmt(values[k, m])}."
    )
    columns = (xlabel or "label", *([ylabel or "value"] if len(names) == 1 else names))
    data = [(str(label), *(fmt(v) for v in values[:, j])) for j, label in enumerate(labels)]
    return rows, summary, columns, data


def bars(
    values: Mapping[str, float],
    title: str = "",
    xlabel: str = "",
    ylabel: str = "",
    log: bool = False,
) -> Figure:
    """One bar per key: probabilities, draw counts, perplexities.

    Example:
        >>> print(bars({"Q8_0": 4.1, "Q4_0": 5.3}, title="Perplexity"))
        Perplexity
          Q8_0  4.1
          Q4_0  5.3
    """
    return grouped_bars(
        {ylabel or "value": list(values.values())},
        [str(k) for k in values],
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        log=log,
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


def error_histogram(
    errors: object,
    bins: int = 30,
    title: str = "Quantization error",
    marks: Mapping[str, float] | None = None,
) -> Figure:
    """Histogram of per-weight errors ``w_hat - w``, with dashed lines at ``marks`` (label: x).

    Example:
        >>> fig = error_histogram(np.linspace(-0.5, 0.5, 101), bins=4, marks={"+half step": 0.5})
        >>> fig.svg.count("<rect"), "+half step" in fig.svg
        (4, True)
    """
    data = np.asarray(errors, dtype=float).ravel()
    if data.size == 0 or not np.isfinite(data).all():
        raise ValueError("errors must be a non-empty array of finite numbers")
    marks = dict(marks or {})
    lo = min([float(data.min()), *marks.values()])
    hi = max([float(data.max()), *marks.values()])
    # With marks, the outer bin edges sit on the outermost marks (or beyond, if data is), so a bar
    # never straddles a mark.
    counts, edges = np.histogram(data, bins=bins, range=(lo, hi) if hi > lo else None)
    ticks = y_ticks(nice_max(float(counts.max())))
    x0 = left_margin(ticks, "weights")
    width, height = x0 + 400, 260 + (16 if marks else 0)
    y0, x1, y1 = 34 + (16 if marks else 0), width - 10, height - 46

    def x_of(v: float) -> float:
        return x0 + (x1 - x0) * (v - edges[0]) / (edges[-1] - edges[0])

    body = [f"<text x='{x0}' y='18' font-weight='bold'>{esc(title)}</text>"]
    body += axes(
        (x0, y0, x1, y1),
        ticks,
        lambda v: y1 - (y1 - y0) * v / ticks[-1][0],
        "weights",
        "error (restored − original)",
    )
    span = (x1 - x0) / bins
    for i, count in enumerate(counts):
        h = (y1 - y0) * count / ticks[-1][0]
        body.append(
            f"<rect x='{x0 + i * span:.1f}' y='{y1 - h:.1f}' width='{max(span - 1, 1):.1f}' "
            f"height='{h:.1f}' fill='{PALETTE[0]}'><title>{fmt(edges[i])} to "
            f"{fmt(edges[i + 1])}: {count}</title></rect>"
        )
    for edge, anchor in ((edges[0], x0), (edges[-1], x1)):
        body.append(f"<text x='{anchor}' y='{y1 + 16}' text-anchor='middle'>{fmt(edge)}</text>")
    for name, value in marks.items():
        x, left_half = x_of(value), x_of(value) < (x0 + x1) / 2
        label_x = x + (4 if left_half else -4)
        body.append(  # the label runs towards the middle, away from the axis and its ticks
            f"<line x1='{x:.1f}' y1='{y0 - 12}' x2='{x:.1f}' y2='{y1}' stroke='{PALETTE[3]}' "
            f"stroke-width='2' stroke-dasharray='5 3'/><text x='{label_x:.1f}' "
            f"y='{y0 - 4}' text-anchor='{'start' if left_half else 'end'}' fill='{PALETTE[3]}'>"
            f"{esc(name)} {fmt(value)}</text>"
        )
    rows = [
        ("weights", str(data.size)),
        ("range", f"{fmt(float(data.min()))} .. {fmt(float(data.max()))}"),
        ("max |error|", fmt(float(np.abs(data).max()))),
    ]
    rows += [(name, fmt(value)) for name, value in marks.items()]
    summary = (
        f"Histogram of {data.size} values from {fmt(float(data.min()))} to "
        f"{fmt(float(data.max()))}, the largest error {fmt(float(np.abs(data).max()))} away from 0"
        + "".join(f"; {name} at {fmt(value)}" for name, value in marks.items())
        + "."
    )
    return figure(svg(width, height, title, body), title, rows, summary, ("measure", "value"))


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
    body = [f"<text x='10' y='18' font-weight='bold'>{esc(title)}</text>"]
    for i in range(n):
        body.append(
            f"<text x='{x0 - 6}' y='{y0 + i * cell + cell * 0.7:.1f}' text-anchor='end'>"
            f"{esc(repr(tokens[i])[1:-1])}</text>"
        )
        body.append(
            f"<text transform='translate({x0 + i * cell + cell * 0.65:.1f} {y0 + n * cell + 6}) "
            f"rotate(60)'>{esc(repr(tokens[i])[1:-1])}</text>"
        )
        for j in range(n):
            if w[i, j] <= 0:
                continue
            body.append(
                f"<rect x='{x0 + j * cell}' y='{y0 + i * cell}' width='{cell - 1}' "
                f"height='{cell - 1}' fill='{PALETTE[0]}' fill-opacity='{min(1.0, w[i, j]):.3f}'>"
                f"<title>{esc(tokens[i])} → {esc(tokens[j])}: {w[i, j]:.3f}</title></rect>"
            )
    body.append(f"<text x='{x0}' y='{y0 - 8}'>keys →   (rows: queries)</text>")
    strongest = [
        (repr(tokens[i]), f"attends most to {tokens[int(w[i].argmax())]!r}") for i in range(n)
    ]
    summary = (
        f"Heatmap of attention over {n} tokens: one row per query token, one column per key "
        "token, darker for more attention; the table says where each query attends most."
    )
    return figure(svg(width, height, title, body), title, strongest, summary, ("query", "attends"))
