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


def test_the_declared_packages_are_every_lessons_once_and_sorted() -> None:
    assert Catalog.load(FIXTURE_LESSONS).declared_packages() == ["numpy"]
    assert Catalog.load(MIXED).declared_packages() == []


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


def test_a_reload_reads_only_the_lesson_whose_file_changed(tmp_path: Path) -> None:
    from promptdojo.course.parse import ParseCache
    from tests.support.course import make_course

    lessons = make_course(tmp_path)
    cache = ParseCache()
    first = Catalog.load(lessons, "default", cache)
    step = lessons / "knobs" / "02-next.md"
    step.write_text(step.read_text() + "\nA new sentence.\n")
    cache.forget({step})
    second = Catalog.load(lessons, "default", cache, first, {step})
    assert second.lessons["hello"] is first.lessons["hello"]  # not looked at again
    assert second.records[("hello", 1)] is first.records[("hello", 1)]
    assert second.lessons["knobs"] is not first.lessons["knobs"]
    html = "".join(p.html for p in second.lessons["knobs"].steps[1].parts if hasattr(p, "html"))
    assert "A new sentence." in html
    assert second.course is first.course  # course.yaml did not change: not read again
    # A change to course.yaml re-reads the outline, and no lesson.
    course = lessons / "course.yaml"
    course.write_text(course.read_text().replace("A test course", "Renamed"))
    cache.forget({course})
    third = Catalog.load(lessons, "default", cache, second, {course})
    assert third.course.title == "Renamed"
    assert third.lessons["knobs"] is second.lessons["knobs"]
