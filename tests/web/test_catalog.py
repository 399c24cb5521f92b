"""The catalog: every lesson parsed once, broken ones kept apart, recorded outputs at hand."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from promptdojo.web.catalog import Catalog
from tests.conftest import FIXTURE_LESSONS, ROOT

MIXED = ROOT / "tests" / "fixtures" / "mixed"


def test_a_broken_lesson_never_hides_the_others() -> None:
    catalog = Catalog.load(MIXED)
    assert list(catalog.lessons) == ["hello"]
    assert list(catalog.broken) == [MIXED / "broken"]
    assert catalog.broken[MIXED / "broken"]


def test_recorded_outputs_are_loaded_per_step() -> None:
    catalog = Catalog.load(FIXTURE_LESSONS)
    hello = catalog.lessons["hello"]
    assert (hello.id, 1) in catalog.records
    assert any(catalog.records[(hello.id, s.number)] for s in hello.steps)
    assert catalog.pages == {}


def test_a_second_lesson_with_the_same_id_is_left_out(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE_LESSONS / "hello", tmp_path / "a-hello")
    shutil.copytree(FIXTURE_LESSONS / "hello", tmp_path / "b-hello")
    catalog = Catalog.load(tmp_path)
    assert catalog.lessons["hello"].path == tmp_path / "a-hello"
    assert catalog.broken == {}


def test_a_missing_lessons_folder_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="promptdojo serve lessons/"):
        Catalog.load(tmp_path / "nowhere")
