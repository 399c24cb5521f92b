"""A broken lesson never breaks the site; in dev mode its author sees the errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings
from tests.conftest import ROOT

MIXED = ROOT / "tests" / "fixtures" / "mixed"
HTML = {"accept": "text/html"}


def client(dev: bool) -> TestClient:
    return TestClient(create_app(Settings(lessons_dir=MIXED, dev=dev)))


def test_good_lesson_is_served_beside_a_broken_one(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="promptdojo.web"):
        c = client(dev=False)
    assert c.get("/lessons/hello/1", headers=HTML).status_code == 200
    index = c.get("/", headers=HTML).text
    assert "Hello, Pyodide" in index
    assert "broken" not in index
    assert c.get("/lessons/broken/1", headers=HTML).status_code == 404
    assert any(
        "lesson left out" in r.getMessage() and "broken/01-a.md:7" in r.getMessage()
        for r in caplog.records
    )


def test_dev_mode_shows_the_broken_lessons_errors() -> None:
    c = client(dev=True)
    assert c.get("/lessons/hello/1", headers=HTML).status_code == 200
    index = c.get("/", headers=HTML).text
    assert "Lessons with errors" in index
    assert 'href="/lessons/broken/1"' in index
    page = c.get("/lessons/broken/1", headers=HTML)
    assert page.status_code == 500
    assert f"{MIXED / 'broken' / '01-a.md'}:7" in page.text
    assert "Python syntax error in cell" in page.text


def test_a_parser_crash_is_contained(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import promptdojo.web.catalog as catalog

    real = catalog.load_lesson

    def flaky(folder: Path, lock: object = "default"):
        if folder.name == "hello":
            raise RuntimeError("boom")
        return real(folder, lock)

    monkeypatch.setattr(catalog, "load_lesson", flaky)
    c = client(dev=True)
    page = c.get("/lessons/hello/1", headers=HTML)
    assert page.status_code == 500
    assert "the lesson parser failed: RuntimeError(&#39;boom&#39;)" in page.text
