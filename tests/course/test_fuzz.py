"""Random and mutated markdown never crashes the parser: it yields a lesson or a list of errors."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptdojo.course import Lesson, LessonError, load_lesson
from tests.conftest import ROOT

SEED_STEPS = sorted((ROOT / "tests" / "fixtures" / "lessons" / "hello").glob("*.md"))
SEED_TEXT = [p.read_text() for p in SEED_STEPS]
PIECES = [
    "---\n",
    "title: T\n",
    "```python\n",
    "```\n",
    "````\n",
    "```python {#a .exercise}\n",
    "```python {.check for=a}\n",
    "```markdown {.hint for=a}\n",
    "{#",
    "}",
    "\n",
    "x = 1\n",
    "if x\n",
    "import numpy\n",
    "\t",
    "\ufeff",
    "\x00",
    "---\ntitle: [\n---\n",
    "# heading\n",
]


def parse(text: str, meta: str = "id: fuzz\ntitle: Fuzz\nchapter: ch 0\n") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "lesson.yaml").write_text(meta, encoding="utf-8")
        (folder / "01-fuzz.md").write_text(text, encoding="utf-8", errors="surrogatepass")
        outcome: Lesson | list = []
        try:
            outcome = load_lesson(folder, lock=None)
        except LessonError as exc:
            outcome = exc.diagnostics
        if isinstance(outcome, Lesson):
            return
        assert outcome, "a failed parse reports at least one diagnostic"
        for d in outcome:
            assert d.location.path.is_relative_to(folder)
            assert d.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    parse(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=30))
def test_markdown_shaped_fragments(pieces: list[str]) -> None:
    parse("".join(pieces))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(SEED_TEXT),
    st.lists(
        st.tuples(st.integers(0, 2000), st.integers(0, 20), st.sampled_from(PIECES)), max_size=6
    ),
)
def test_mutated_real_steps(seed: str, edits: list[tuple[int, int, str]]) -> None:
    text = seed
    for position, cut, insert in edits:
        position %= len(text) + 1
        text = text[:position] + insert + text[position + cut :]
    parse(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_lesson_yaml(meta: str) -> None:
    parse("---\ntitle: T\n---\n", meta=meta)
