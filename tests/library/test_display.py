"""Pictures: valid SVG with labelled axes, theme-neutral colours, and escaped labels."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from promptdojo import display

SVG = "{http://www.w3.org/2000/svg}"


def parse(fig: display.Figure) -> ET.Element:
    root = ET.fromstring(fig._repr_svg_())
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("fill") == "currentColor", "text must follow the page's colour (light/dark)"
    return root


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


FIGURES = {
    "bars": lambda: display.bars({"the": 0.6, "a": 0.4}, title="P", ylabel="probability"),
    "compare": lambda: display.compare_distributions(
        {"T=1.0": [0.6, 0.3, 0.1], "T=0.2": [0.98, 0.02, 0.0]}, ["the", "a", "one"]
    ),
    "histogram": lambda: display.error_histogram(np.linspace(-1, 1, 50)),
    "heatmap": lambda: display.attention_heatmap(np.tril(np.ones((3, 3))) / 3, ["a", "b", "c"]),
    "memory": lambda: display.memory_bars({"8k": 2**30}, limit=2**31),
    "growth": lambda: display.kv_cache_growth({"Llama-3-8B": 131072}, 32768),
    "blocks": lambda: display.block_map(["a", "a", None, "b"] * 20, title="The pool", columns=24),
    "lines": lambda: display.line_chart(
        {"continuous batching": ([7.9, 16.6], [248, 2584]), "static": ([7.9, 14.5], [157, 1213])},
        title="One A100, Llama-3.1-8B: throughput against time per token",
        xlabel="median time per output token (ms)",
        ylabel="tokens per second",
        labels={"continuous batching": ["2", "128"]},
    ),
}


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_picture_is_valid_svg_with_a_title(name) -> None:
    fig = FIGURES[name]()
    root = parse(fig)
    assert root.find(f"{SVG}title") is not None
    assert repr(fig).strip()


def test_axes_are_labelled() -> None:
    root = parse(display.bars({"int8": 4.0, "int4": 6.0}, xlabel="format", ylabel="perplexity"))
    labels = texts(root)
    assert "format" in labels
    assert "perplexity" in labels
    assert "int8" in labels
    assert "int4" in labels
    root = parse(display.error_histogram([0.1, -0.1]))
    assert "weights" in texts(root)
    assert "error (restored − original)" in texts(root)


def test_bar_heights_are_proportional() -> None:
    root = parse(display.bars({"a": 1.0, "b": 0.5}))
    heights = [float(r.get("height")) for r in root.iter(f"{SVG}rect")]
    assert heights[0] == pytest.approx(2 * heights[1])


def test_labels_are_escaped() -> None:
    fig = display.bars({"<script>alert(1)</script>": 1.0}, title="<b onerror=x>")
    assert "<script>" not in fig.svg
    assert "<b onerror" not in fig.svg
    parse(fig)


def test_limit_marks_overflowing_bars() -> None:
    svg = display.memory_bars({"small": 1.0, "big": 10.0}, limit=5.0).svg
    assert display.PALETTE[3] in svg
    assert "limit" in svg


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one block"):
        display.block_map([])
    with pytest.raises(ValueError, match="as many x values as y values"):
        display.line_chart({"a": ([1, 2], [1])})
    with pytest.raises(ValueError, match="values, one per label"):
        display.grouped_bars({"x": [1.0]}, ["a", "b"])
    with pytest.raises(ValueError, match="square"):
        display.attention_heatmap(np.ones((2, 3)), ["a", "b"])


# An independent, generous estimate of text extents: 0.62 em per glyph (0.68 bold) for system-ui
# at 12 px, 0.8 em above the baseline and 0.25 em below.
def _text_boxes(root: ET.Element) -> list[tuple[str, tuple[float, float, float, float]]]:
    import math
    import re

    boxes = []
    for t in root.iter(f"{SVG}text"):
        content = t.text or ""
        length = len(content) * 12 * (0.68 if t.get("font-weight") == "bold" else 0.62)
        anchor = {"middle": -length / 2, "end": -length}.get(t.get("text-anchor", ""), 0.0)
        x, y, angle = float(t.get("x", 0)), float(t.get("y", 0)), 0.0
        transform = t.get("transform", "")
        if m := re.search(r"translate\(([-\d.]+)[ ,]+([-\d.]+)\)", transform):
            x, y = x + float(m.group(1)), y + float(m.group(2))
        if m := re.search(r"rotate\(([-\d.]+)\)", transform):
            angle = math.radians(float(m.group(1)))
        pts = [
            (
                x + u * math.cos(angle) - v * math.sin(angle),
                y + u * math.sin(angle) + v * math.cos(angle),
            )
            for u in (anchor, anchor + length)
            for v in (-9.6, 3.0)
        ]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        boxes.append((content, (min(xs), min(ys), max(xs), max(ys))))
    return boxes


LONG = "Llama-3.1-8B KV cache (fp16) against the 55.10 GiB an 80 GiB GPU leaves for it"
OVERFLOW_CASES = {
    **FIGURES,
    "long title": lambda: display.bars({"Q8_0": 0.1, "Q4_0": 3.0}, title=LONG, ylabel="change (%)"),
    "big ticks": lambda: display.grouped_bars(
        {"with cache": [4.2e5, 5.1e5], "recomputed": [3.4e6, 6.6e7]},
        ["step 8", "step 128"],
        title="Multiply-adds for one generated token (log scale)",
        ylabel="multiply-adds",
        log=True,
    ),
    "memory long": lambda: display.memory_bars(
        {"32k x 8 sessions of a long name": 2**35}, title=LONG, limit=2**34
    ),
    "growth long": lambda: display.kv_cache_growth(
        {"Llama-2-7B": 524288, "Llama-3.1-8B": 131072, "Mistral-NeMo-12B": 163840},
        131072,
        title=LONG,
    ),
    "histogram marks": lambda: display.error_histogram(
        np.linspace(-0.2, 0.2, 99), title=LONG, marks={"-half step": -0.2, "+half step": 0.2}
    ),
    "heatmap": lambda: display.attention_heatmap(
        np.tril(np.ones((14, 14))) / 14, list("def add(a, b):"), title=LONG
    ),
}


@pytest.mark.parametrize("name", sorted(OVERFLOW_CASES))
def test_no_text_overflows_the_viewbox(name: str) -> None:
    root = parse(OVERFLOW_CASES[name]())
    left, top, width, height = (float(v) for v in root.get("viewBox").split())
    for content, (x0, y0, x1, y1) in _text_boxes(root):
        inside_x, inside_y = left <= x0 and x1 <= left + width, top <= y0 and y1 <= top + height
        assert inside_x, f"{content!r} spans x {x0:.0f}..{x1:.0f}, the viewBox {left}..{width}"
        assert inside_y, f"{content!r} spans y {y0:.0f}..{y1:.0f}, the viewBox {top}..{height}"


def test_y_label_keeps_clear_of_the_tick_labels() -> None:
    root = parse(OVERFLOW_CASES["big ticks"]())
    boxes = dict(_text_boxes(root))
    label = boxes["multiply-adds"]
    ticks = [box for text, box in boxes.items() if text.startswith("1e+")]
    assert ticks, "a log axis labels its powers of ten"
    assert all(label[2] < tick[0] for tick in ticks), (label, ticks)


def test_log_axis_shows_small_bars_beside_large_ones() -> None:
    root = parse(OVERFLOW_CASES["big ticks"]())
    heights = [
        float(r.get("height")) for r in root.iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None
    ]
    assert min(heights) > 0.15 * max(heights), heights  # on a linear axis: under 1%
    with pytest.raises(ValueError, match="every value > 0"):
        display.bars({"a": 0.0, "b": 1.0}, log=True)


def test_histogram_marks_the_half_steps_it_is_asked_to() -> None:
    fig = display.error_histogram(
        np.linspace(-0.1, 0.1, 50), marks={"-half step": -0.125, "+half step": 0.125}
    )
    root = parse(fig)
    dashed = [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray")]
    assert len(dashed) == 2
    assert "+half step" in repr(fig)
    # No bar straddles a mark: every bar lies between the two dashed lines.
    low, high = sorted(float(line.get("x1")) for line in dashed)
    bars = [r for r in root.iter(f"{SVG}rect") if float(r.get("height")) > 0]
    assert bars
    for r in bars:
        x, w = float(r.get("x")), float(r.get("width"))
        assert low - 0.1 <= x, (x, low)
        assert x + w <= high + 0.1, (x + w, high)


def test_kv_cache_growth_stops_each_model_at_its_context() -> None:
    from promptdojo.display import kv_cache_growth

    figure = kv_cache_growth(
        {"MHA": 512 * 1024, "GQA": 128 * 1024},
        max_tokens=32_768,
        contexts={"MHA": 4_096, "GQA": 131_072},
    )
    text = str(figure)
    assert "MHA  512.00 KiB/token, 2.00 GiB at 4,096 (its context)" in text
    assert "GQA  128.00 KiB/token, 4.00 GiB at 32,768" in text
    assert figure._repr_svg_().count("<circle") == 1  # one line ends early, marked
