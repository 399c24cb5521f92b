"""lesson.yaml and front matter read with libyaml give what PyYAML alone gives: the same data,
the same key lines, and the same mistakes at the same lines with the same words."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from promptdojo.course import metadata, yamlread
from promptdojo.course.problems import Report
from tests.conftest import ROOT

#: Texts on which libyaml and PyYAML part (a tab, a tag, an explicit key, a block scalar's
#: header), texts each refuses, and everyday ones.
TEXTS = [
    "title: A\nsummary: The first step.\n",
    'title: "Top-p: nucleus sampling"\n',
    "title: Top-p: nucleus sampling\n",
    "id: x\npackages: [numpy, scipy]\ntime_limit: 30\nseed: 0\n",
    "title: a\tb\n",
    "title:\ta\n",
    "\ufefftitle: A\n",
    "a: !\n",
    "a: !!str 1\n",
    "? a\n",
    "a: {b?: c}\n",
    "a: [b, c?]\n",
    "a: |#\n  x\n",
    "a: >-\n  x\n\n  y\n",
    "a: &x 1\nb: *x\n",
    "a: {b: }\n",
    "---",
    "",
    "# only a comment\n",
    "- a\n- b\n",
    "a: [1, 2\n",
    "a: 'x\n",
    "a:\n  - 1\n  - [2, {b: 3}]\n",
    "null: 1\n1: 2\n'q': 3\n",
    "a: b\nc:d\n",
    "a: 1\na: 2\n",
    "a: b\x85c: d",
    "a: \x07\n",
    "[" * 40 + "]" * 40,
    "a:\n" + "".join(f"{'  ' * i}b{i}:\n" for i in range(1, 40)),
]


def _mapping(text: str, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple:
    with monkeypatch.context() as patched:
        if not fast:
            patched.setattr(yamlread, "_FastLoader", None)
        metadata._plain_key.cache_clear()  # each reading reads its keys itself
        report = Report()
        loaded = metadata.load_mapping(text, Path("x.md"), 2, report, "front matter")
        return repr(loaded), [str(d) for d in report.items]


def _front_matters() -> list[str]:
    texts = [path.read_text() for path in (ROOT / "lessons").glob("*/lesson.yaml")]
    for step in (ROOT / "lessons").glob("*/*.md"):
        text = step.read_text()
        if text.startswith("---\n"):
            texts.append(text[4:].partition("\n---")[0])
    return texts


@pytest.mark.skipif(yamlread._FastLoader is None, reason="PyYAML without libyaml")
def test_libyaml_reads_what_pyyaml_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = TEXTS + _front_matters()
    # And the real texts with a few characters of YAML put in or taken out.
    marks = [*":-?[]{},#&*!|>'\"%@`\t \n\r\ufeffé", ": ", "- ", "\n  ", "{a: }", "!!int "]
    rng = random.Random(0)
    for text in _front_matters() * 20:
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(text))
            if rng.random() < 0.6:
                text = text[:at] + rng.choice(marks) + text[at:]
            else:
                text = text[:at] + text[at + rng.randint(1, 3) :]
        texts.append(text)
    for text in texts:
        assert _mapping(text, True, monkeypatch) == _mapping(text, False, monkeypatch), text


def test_a_tab_in_a_title_is_a_mistake_as_pyyaml_says() -> None:
    report = Report()
    assert metadata.load_mapping("title: a\tb\n", Path("x.md"), 2, report, "front matter") is None
    assert [d.location.line for d in report.items] == [2]
    assert "invalid YAML in front matter" in report.items[0].message
