"""Pictures with words: every picture the learner library draws carries a title, a one-line
summary and its data as rows (promptdojo.kernel.FIGURE_MIME), and every picture of the shipped
lesson's recorded outputs is shown with them: the alt text and a table a screen reader can walk."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from promptdojo import display
from promptdojo.course import discover, load_lesson
from promptdojo.course.records import load_records
from promptdojo.kernel import FIGURE_MIME, _mime_bundle, figure_words
from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings
from tests.conftest import REAL_LESSONS

PICTURES = {
    "bars": lambda: display.bars({"Q8_0": 4.1, "Q4_0": 5.3}, title="Perplexity"),
    "grouped_bars": lambda: display.grouped_bars(
        {"T=1": [0.6, 0.4], "T=0.2": [0.9, 0.1]}, ["the", "a"], title="Two temperatures"
    ),
    "compare_distributions": lambda: display.compare_distributions(
        {"p": [0.5, 0.5], "q": [0.9, 0.1]}, ["x", "y"]
    ),
    "error_histogram": lambda: display.error_histogram(
        np.linspace(-1, 1, 50), title="Errors", marks={"step": 0.25}
    ),
    "attention_heatmap": lambda: display.attention_heatmap(
        np.array([[1.0, 0.0], [0.3, 0.7]]), ["a", "b"]
    ),
    "memory_bars": lambda: display.memory_bars({"fp16": 2e9, "q4": 6e8}, limit=1e9),
    "kv_cache_growth": lambda: display.kv_cache_growth({"m": 131072.0}, 8192),
    "block_map": lambda: display.block_map(["a", "a", None, "b"], title="Pool"),
    "line_chart": lambda: display.line_chart(
        {"static": ([1, 8], [120, 700]), "continuous": ([1, 8], [126, 950])},
        title="Throughput",
        xlabel="batch",
        labels={"continuous": ["1", "8"]},
    ),
}


def test_every_drawing_function_of_the_library_is_walked_here() -> None:
    drawing = {n for n in display.__all__ if n[0].islower()}
    assert drawing == set(PICTURES)


@pytest.mark.parametrize("name", list(PICTURES))
def test_every_picture_carries_its_words(name: str) -> None:
    bundle = _mime_bundle(PICTURES[name]())
    assert "image/svg+xml" in bundle
    words = figure_words(bundle)
    assert words is not None, f"{name} has no {FIGURE_MIME}"
    assert words["title"], words
    assert words["summary"].endswith("."), words
    assert len(words["columns"]) >= 2, words
    assert words["rows"], words
    assert all(len(row) == len(words["columns"]) for row in words["rows"]), words
    assert all(all(row) for row in words["rows"]), words


class _Pictures(HTMLParser):
    """Each ``img.value`` of a page, and whether a ``table.figure-data`` follows it."""

    def __init__(self) -> None:
        super().__init__()
        self.pictures: list[dict] = []
        self._table: dict | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        classes = (found.get("class") or "").split()
        if tag == "img" and "value" in classes:
            self.pictures.append({"alt": found.get("alt"), "table": None})
        elif tag == "table" and "figure-data" in classes and self.pictures:
            self._table = self.pictures[-1]["table"] = {"headers": 0, "rows": 0, "text": ""}
        elif self._table is not None and tag == "tr":
            self._table["rows"] += 1
        elif self._table is not None and tag == "th" and found.get("scope") == "col":
            self._table["headers"] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._table is not None:
            self._table["text"] += data


@pytest.mark.parametrize("lesson_id", [folder.name for folder in discover(REAL_LESSONS)])
def test_every_recorded_picture_of_the_lesson_has_its_words(tmp_path: Path, lesson_id: str) -> None:
    lesson = load_lesson(REAL_LESSONS / lesson_id)
    client = TestClient(
        create_app(Settings(lessons_dir=REAL_LESSONS, package_cache_dir=tmp_path / "pkgs"))
    )
    walked = 0
    for step in lesson.steps:
        records = load_records(step)
        page = client.get(f"/lessons/{lesson.id}/{step.number}", headers={"accept": "text/html"})
        parser = _Pictures()
        parser.feed(page.text)
        expected = [  # in the page's order
            (cell.id, figure_words(records[cell.id]["value"]))
            for cell in step.cells
            if "image/svg+xml" in records.get(cell.id, {}).get("value", {})
        ]
        assert len(parser.pictures) == len(expected), step.path
        for (cell_id, words), shown in zip(expected, parser.pictures, strict=True):
            where = f"{step.path} ({cell_id})"
            assert words is not None, f"{where}: a recorded picture without its words"
            assert words["summary"], where
            assert shown["alt"] == words["alt"], where
            table = shown["table"]
            assert table is not None, f"{where}: no table of the picture's data"
            assert table["headers"] == len(words["columns"]), where
            assert table["rows"] == len(words["rows"]) + 1, where
            assert "".join(words["rows"][0]) in table["text"], where
            walked += 1
    assert walked > 5  # each lesson draws pictures in most steps
