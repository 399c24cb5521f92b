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
    # Listed where it belongs, as unavailable, with neither a link nor its author's problems.
    assert "A broken lesson" in index
    assert "this lesson is being fixed" in index
    assert 'href="/lessons/broken/1"' not in index
    assert "01-a.md" not in index
    # Its URL says the lesson is away for now, not that there is no such lesson.
    away = c.get("/lessons/broken/1", headers=HTML)
    assert away.status_code == 503
    assert away.headers["retry-after"] == "300"
    assert "“broken” is being fixed" in away.text
    assert "01-a.md" not in away.text
    assert "<h1>Back soon</h1>" in away.text
    assert c.get("/lessons/no-such-lesson/1", headers=HTML).status_code == 404
    assert any(
        "lesson left out" in r.getMessage() and "broken/01-a.md:7" in r.getMessage()
        for r in caplog.records
    )


def test_dev_mode_shows_the_broken_lessons_errors() -> None:
    c = client(dev=True)
    assert c.get("/lessons/hello/1", headers=HTML).status_code == 200
    index = c.get("/", headers=HTML).text
    assert 'href="/lessons/broken/1"' in index
    # Its card names each problem at FILE:LINE.
    assert f"<code>{MIXED / 'broken' / '01-a.md'}:7</code>: Python syntax error" in index
    page = c.get("/lessons/broken/1", headers=HTML)
    assert page.status_code == 200
    assert "<code>broken/01-a.md:7</code>" in page.text
    assert str(ROOT) not in page.text, "no path of the server's machine on the page"
    assert "Python syntax error in cell" in page.text
    assert "This step has 1 problem" in page.text


def _three_steps(tmp_path: Path, typo_in_step_3: bool) -> Path:
    lesson = tmp_path / "spec"
    lesson.mkdir()
    (lesson / "lesson.yaml").write_text("id: spec\ntitle: Speculative\nchapter: ch 1\n")
    for n in (1, 2, 3):
        body = "x = 1\nprint(x)" if n != 3 or not typo_in_step_3 else "x = 1\nif x\n    pass"
        (lesson / f"0{n}-s{n}.md").write_text(
            f"---\ntitle: Step {n}\n---\n\nProse {n}.\n\n```python {{#c{n}}}\n{body}\n```\n"
        )
    return tmp_path


def test_one_typo_in_step_3_leaves_steps_1_and_2_readable(tmp_path: Path) -> None:
    folder = _three_steps(tmp_path, typo_in_step_3=True)
    c = TestClient(create_app(Settings(lessons_dir=folder, dev=True)))
    for n in (1, 2):
        page = c.get(f"/lessons/spec/{n}", headers=HTML)
        assert page.status_code == 200, n
        assert f"Prose {n}." in page.text
        assert "lesson-problems" not in page.text
        assert 'class="step-problem-count"' in page.text  # the step list marks step 3
    third = c.get("/lessons/spec/3", headers=HTML)
    assert third.status_code == 200
    assert "This step has 1 problem" in third.text
    assert "<code>spec/03-s3.md:9</code>: Python syntax error in cell &#39;c3&#39;" in third.text
    assert "Prose 3." in third.text  # the step itself is still shown under its problems
    index = c.get("/", headers=HTML).text
    assert "No lessons here yet" not in index
    assert "No lesson can be opened yet" in index
    assert f"<code>{folder / 'spec' / '03-s3.md'}:9</code>" in index
    assert 'href="/lessons/spec/3">3</a>' in index


def test_a_lesson_with_a_broken_step_stays_hidden_from_learners(tmp_path: Path) -> None:
    folder = _three_steps(tmp_path, typo_in_step_3=True)
    c = TestClient(create_app(Settings(lessons_dir=folder, dev=False)))
    assert c.get("/lessons/spec/1", headers=HTML).status_code == 503  # away, not unknown
    index = c.get("/", headers=HTML).text
    assert "No lessons here yet" not in index  # the folder is there: it is being fixed
    assert "Speculative" in index
    assert "this lesson is being fixed" in index
    assert 'href="/lessons/spec/1"' not in index


def test_a_broken_lesson_yaml_shows_on_every_step(tmp_path: Path) -> None:
    folder = _three_steps(tmp_path, typo_in_step_3=False)
    (folder / "spec" / "lesson.yaml").write_text(
        "id: spec\ntitle: Speculative\nchapter: ch 1\nsed: 3\n"
    )
    c = TestClient(create_app(Settings(lessons_dir=folder, dev=True)))
    page = c.get("/lessons/spec/2", headers=HTML)
    assert page.status_code == 200
    assert "This lesson has problems" in page.text
    assert "unknown key &#39;sed&#39;" in page.text


def test_a_parser_crash_is_contained(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import promptdojo.course.parse as catalog  # the one reader, promptdojo.course.bulk's

    real = catalog.read_lesson

    def flaky(folder: Path, lock: object = "default", cache: object = None):
        if folder.name == "hello":
            raise RuntimeError("boom")
        return real(folder, lock, cache)

    monkeypatch.setattr(catalog, "read_lesson", flaky)
    c = client(dev=True)
    page = c.get("/lessons/hello/1", headers=HTML)
    assert page.status_code == 500
    assert "the lesson parser failed: RuntimeError(&#39;boom&#39;)" in page.text
