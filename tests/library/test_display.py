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
    with pytest.raises(ValueError, match="values, one per label"):
        display.grouped_bars({"x": [1.0]}, ["a", "b"])
    with pytest.raises(ValueError, match="square"):
        display.attention_heatmap(np.ones((2, 3)), ["a", "b"])
