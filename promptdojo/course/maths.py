"""Maths in prose: ``$…$`` inline and ``$$…$$`` display, rendered to MathML when a lesson is read.

Browsers draw MathML Core themselves, so a formula needs no script (nothing that would need the
page's CSP to allow ``unsafe-eval``) and no network request. ``latex2mathml`` converts the TeX;
its output is parsed again and kept only when every element is a MathML one and no attribute is
an event handler or a link, so a formula can never carry HTML into the page.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from typing import Any

from latex2mathml.converter import convert

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
#: MathML Core's elements (and ``merror``/``menclose``, which latex2mathml may emit).
ELEMENTS = frozenset(
    [
        "math",
        "mrow",
        "mi",
        "mn",
        "mo",
        "ms",
        "mtext",
        "mspace",
        "msub",
        "msup",
        "msubsup",
        "mfrac",
        "msqrt",
        "mroot",
        "munder",
        "mover",
        "munderover",
        "mtable",
        "mtr",
        "mtd",
        "mstyle",
        "mpadded",
        "mphantom",
        "menclose",
        "merror",
        "semantics",
        "annotation",
        "mmultiscripts",
        "mprescripts",
        "none",
    ]
)
_UNKNOWN_COMMAND = re.compile(r"^\\[A-Za-z]+$")


class MathError(ValueError):
    """TeX that cannot become safe MathML; the message says what is wrong."""


def to_mathml(tex: str, display: bool = False) -> str:
    """``tex`` as a ``<math>`` element; raise :class:`MathError` for TeX it cannot render."""
    try:
        markup = convert(tex, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many kinds for malformed TeX
        raise MathError(f"cannot read the TeX ({exc})") from None
    try:
        root = ET.fromstring(markup)
    except ET.ParseError:
        raise MathError(
            "the TeX holds characters MathML cannot carry (<, > or & in \\text?)"
        ) from None
    for element in root.iter():
        namespace, _, name = element.tag.rpartition("}")
        if namespace.lstrip("{") != MATHML_NS or name not in ELEMENTS:
            raise MathError(f"the TeX produced <{name}>, which is not MathML")
        element.tag = name
        for attribute in list(element.attrib):
            if attribute.lower().startswith("on") or "href" in attribute.lower():
                raise MathError(f"the TeX produced the attribute {attribute}")
        if name == "mi" and element.text and _UNKNOWN_COMMAND.match(element.text):
            raise MathError(f"unknown TeX command {element.text}")
    root.set("xmlns", MATHML_NS)
    return ET.tostring(root, encoding="unicode")


def render(content: str, options: dict[str, Any]) -> str:
    """The dollarmath plugin's renderer: MathML, or the TeX as code when it cannot be rendered.

    Validation reports the mistake at its line, so only a development preview shows the code.
    """
    display = bool(options.get("display_mode"))
    try:
        return to_mathml(content.strip(), display)
    except MathError:
        tag = "pre" if display else "code"
        return f'<{tag} class="math-error">{html.escape(content)}</{tag}>'
