"""``serve --reload`` parses in a worker thread: a step that takes long to parse, or a FIFO named
like a step, never stops the server answering; editors' files and FIFOs are no changes."""

from __future__ import annotations

import os
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from watchfiles import Change

from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings

#: A bound on waits that end as soon as what they wait for happens.
PATIENCE = 30.0
STEP = "---\ntitle: {title}\n---\nText.\n\n```python\nprint(1)\n```\n"


def _get(url: str) -> str:
    """The body at ``url``; a server whose event loop is stuck fails this in 10 s."""
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


@contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` behind a real uvicorn on a free loopback port, with its lifespan (the watcher)."""
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + PATIENCE
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.02)
    assert server.started, "uvicorn did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(PATIENCE)


def _wait_for(predicate: Callable[[], bool]) -> bool:
    """Whether ``predicate`` holds within :data:`PATIENCE` (a page not there yet is no error)."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except urllib.error.HTTPError:
            pass
        time.sleep(0.1)
    return False


@pytest.fixture
def lesson(fixture_lessons: Path, tmp_path: Path) -> Path:
    shutil.copytree(fixture_lessons / "hello", tmp_path / "lessons" / "hello")
    return tmp_path / "lessons" / "hello"


def _reloading_app(lesson: Path) -> FastAPI:
    settings = Settings(
        lessons_dir=lesson.parent, reload=True, package_cache_dir=lesson.parent / "pkgs"
    )
    return create_app(settings)


@pytest.mark.timeout(120)
def test_the_server_answers_while_a_reload_parses(
    lesson: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import promptdojo.course.parse as parse

    parsing, release = threading.Event(), threading.Event()
    real = parse.parse_step

    def slow(md: object, path: Path, *args: object) -> object:
        """Parses the new step only once the test has asked the server for a page."""
        if path.name == "04-big.md":
            parsing.set()
            release.wait(PATIENCE)
        return real(md, path, *args)

    monkeypatch.setattr(parse, "parse_step", slow)
    with serving(_reloading_app(lesson)) as url:
        try:
            (lesson / "04-big.md").write_text(STEP.format(title="Big"))
            assert parsing.wait(PATIENCE), "no reload parsed the new step"
            # The reload is parsing now, and stays so until released: the server still answers.
            assert _get(url + "/healthz") == "ok"
            assert "Where does this code run?" in _get(url + "/lessons/hello/1")
        finally:
            release.set()
        assert _wait_for(lambda: "Big" in _get(url + "/lessons/hello/4"))


@pytest.mark.timeout(120)
def test_a_fifo_named_like_a_step_never_stops_the_server(lesson: Path) -> None:
    with serving(_reloading_app(lesson)) as url:
        os.mkfifo(lesson / "04-pipe.md")  # reading it would wait for a writer forever
        step = lesson / "01-where-am-i.md"
        step.write_text(step.read_text().replace("Where does this code run?", "Edited"))
        assert _wait_for(lambda: "<h1>Edited</h1>" in _get(url + "/lessons/hello/1"))
        assert _get(url + "/healthz") == "ok"
        with pytest.raises(urllib.error.HTTPError, match="404"):  # the FIFO is no step
            _get(url + "/lessons/hello/4")


@pytest.mark.parametrize(
    "name", [".#01-a.md", "._01-a.md", "01-a.md~", ".01-a.md.swp", "4913", "#01-a.md#"]
)
def test_editor_files_are_no_changes(tmp_path: Path, name: str) -> None:
    from promptdojo.web.live import LessonChanges

    (tmp_path / name).write_text("x")
    watched = LessonChanges()
    assert not watched(Change.added, str(tmp_path / name))
    assert not watched(Change.modified, str(tmp_path / name))
    assert not watched(Change.deleted, str(tmp_path / name))


def test_a_fifo_is_no_change_but_steps_records_and_deletions_are(tmp_path: Path) -> None:
    from promptdojo.web.live import LessonChanges

    os.mkfifo(tmp_path / "02-b.md")
    (tmp_path / "01-a.md").write_text("x")
    (tmp_path / "recorded").mkdir()
    watched = LessonChanges()
    assert not watched(Change.added, str(tmp_path / "02-b.md"))
    assert watched(Change.modified, str(tmp_path / "01-a.md"))
    assert watched(Change.added, str(tmp_path / "recorded"))
    assert watched(Change.deleted, str(tmp_path / "03-c.md"))


@pytest.mark.timeout(120)
def test_a_saved_step_replaces_the_page_served_from_memory(lesson: Path) -> None:
    """Pages are rendered once and served from memory; saving a step file under ``--reload``
    serves the new text, on that step's page and on the course map."""
    with serving(_reloading_app(lesson)) as url:
        page = url + "/lessons/hello/1"
        with urllib.request.urlopen(page, timeout=10) as first:
            etag = first.headers["etag"]
        with urllib.request.urlopen(page, timeout=10) as again:
            assert again.headers["etag"] == etag  # the same page, from memory
        step = lesson / "01-where-am-i.md"
        step.write_text(step.read_text() + "\nA sentence saved just now.\n")
        assert _wait_for(lambda: "A sentence saved just now." in _get(page))
        meta = lesson / "lesson.yaml"
        meta.write_text(meta.read_text().replace("Hello, Pyodide", "Hello again, Pyodide"))
        assert _wait_for(lambda: "Hello again, Pyodide" in _get(url + "/"))
