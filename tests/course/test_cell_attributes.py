"""Cell attributes read by the everyday-form pattern agree with mdit-py-plugins' parser, which
reads every other form (and every mistake)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mdit_py_plugins.attrs.parse import ParseError, parse

from promptdojo.course.cells import _EVERYDAY, read_attributes
from tests.conftest import ROOT

EXAMPLES = [
    "{#a .exercise}",
    "{.check for=a}",
    '{.wrong for=x expect="too high"}',
    '{#x  .a class=b time_limit=5 no-ci="needs the network"}',
    '{.a .b #c #d k=""}',
    "{#a}x",
    "{#a.b}",
    "{}",
    "{ #a }",
    "{#a\t.b}",
    '{k="a\\"b"}',
    "{#a %comment% .b}",
    '{k="a"b=1}',
    "{.é #ñ}",
    "{k=1 k=2}",
    "{#a",
]


def _attributes(paths: list[Path]) -> list[str]:
    """The attributes of every fence in ``paths``."""
    found = []
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("```") and "{" in line:
                found.append(line[line.index("{") :])
    return found


LESSONS = sorted(ROOT.glob("lessons/*/*.md"))
FIXTURES = sorted(ROOT.glob("tests/fixtures/**/*.md"))


def _library(text: str) -> tuple[int, dict[str, str]] | str:
    try:
        return parse(text)
    except ParseError as exc:
        return f"ParseError: {exc}"


def _ours(text: str) -> tuple[int, dict[str, str]] | str:
    try:
        return read_attributes(text)
    except ParseError as exc:
        return f"ParseError: {exc}"


def _agree(text: str) -> None:
    ours, theirs = _ours(text), _library(text)
    assert ours == theirs, text
    # Dict order is the order of "unknown attribute" reports: it must agree too.
    if isinstance(ours, tuple):
        assert list(ours[1]) == list(theirs[1]), text  # type: ignore[index]


@pytest.mark.parametrize("text", EXAMPLES)
def test_the_everyday_form_reads_as_the_library_reads_it(text: str) -> None:
    _agree(text)


def test_every_shipped_fence_reads_as_the_library_reads_it() -> None:
    shipped = _attributes(LESSONS + FIXTURES)
    assert len(shipped) > 100
    for text in shipped:
        _agree(text)
    # The lessons' attributes are all in the everyday form: the pattern is what reads them.
    assert all(_EVERYDAY.match(text) for text in _attributes(LESSONS))


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet='{}#.="\\ \t\n%-:_aZ1é', min_size=1, max_size=24))
def test_any_string_reads_as_the_library_reads_it(text: str) -> None:
    _agree("{" + text)
