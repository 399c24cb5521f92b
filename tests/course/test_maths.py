"""Maths in prose: MathML from the page itself, no script, no network, no HTML smuggled in."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdojo.course.maths import MathError, to_mathml
from promptdojo.course.parse import markdown, read_lesson


def test_inline_and_display_maths_become_mathml() -> None:
    html = markdown().render(
        "The ratio $\\frac{p(x)}{q(x)}$ decides.\n\n$$\n\\min\\left(1, \\frac{p}{q}\\right)\n$$\n"
    )
    assert '<math display="inline" xmlns="http://www.w3.org/1998/Math/MathML">' in html
    assert "<mfrac><mrow><mi>p</mi>" in html
    assert '<math display="block" xmlns="http://www.w3.org/1998/Math/MathML">' in html
    assert "$" not in html
    assert "<script" not in html


def test_dollars_of_money_stay_text() -> None:
    html = markdown().render("It costs $5 and $10, or $ 3 $.\n")
    assert "<math" not in html
    assert "$5 and $10" in html


def test_tex_that_would_carry_html_is_refused() -> None:
    with pytest.raises(MathError):
        to_mathml("\\text{<script>alert(1)</script>}")
    html = markdown().render("Bad $\\text{<img src=x onerror=alert(1)>}$.\n")
    assert "<img" not in html
    assert 'class="math-error"' in html


def test_maths_that_cannot_render_is_reported_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "lesson.yaml").write_text("id: l\ntitle: L\nchapter: c\n")
    (tmp_path / "01-a.md").write_text(
        "---\ntitle: A\n---\n\nFine $x_1$.\n\nNot fine\n$\\notacommand{a}$ here.\n"
    )
    problems = [str(d) for d in read_lesson(tmp_path).problems]
    assert problems == [
        f"{tmp_path / '01-a.md'}:8: cannot render the maths $\\notacommand{{a}}$: unknown TeX "
        "command \\notacommand: write TeX such as \\frac{p(x)}{q(x)}, x_1, \\sum_{i=1}^{n}, "
        "\\min(1, r)"
    ]


def test_every_example_of_the_supported_tex_renders() -> None:
    import re

    from tests.conftest import ROOT

    doc = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    section = doc.split("### Supported TeX", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r"`\$(.+?)\$`", section)
    assert len(examples) >= 30
    for tex in examples:
        assert "<math" in to_mathml(tex, False), tex
    with pytest.raises(MathError):
        to_mathml(r"\arg\max_x", False)
