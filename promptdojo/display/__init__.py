"""Pictures for lessons, drawn as plain SVG: no JavaScript, no matplotlib.

Every function returns a :class:`Figure`. A notebook-style front end shows it through
``_repr_svg_``; ``repr()`` gives a small text table of the same numbers, so a terminal (or a test)
sees the data too. Text and axes use ``currentColor`` and the bar colours are mid-tones, so a
picture reads on light and dark pages alike; the viewBox grows to hold every label.

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

from promptdojo.display.charts import (
    attention_heatmap,
    bars,
    compare_distributions,
    error_histogram,
    grouped_bars,
)
from promptdojo.display.memory import kv_cache_growth, memory_bars
from promptdojo.display.serving import block_map, line_chart
from promptdojo.display.svg import PALETTE, Figure

__all__ = [
    "PALETTE",
    "Figure",
    "attention_heatmap",
    "bars",
    "block_map",
    "compare_distributions",
    "error_histogram",
    "grouped_bars",
    "kv_cache_growth",
    "line_chart",
    "memory_bars",
]
