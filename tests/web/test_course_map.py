"""The index as a course map, the next-lesson link, search documents, and a course export whose
every internal link resolves under a non-root base."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.course.validate import validate
from promptdojo.web.app import create_app
from promptdojo.web.export import ExportError, export_site
from promptdojo.web.settings import Settings
from tests.support.course import make_course
from tests.support.static_host import plain_server

HTML = {"accept": "text/html"}


def client(lessons: Path, dev: bool = False) -> TestClient:
    return TestClient(create_app(Settings(lessons_dir=lessons, dev=dev)))


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_index_shows_parts_numbered_chapters_and_lessons_in_course_order(
    tmp_path: Path,
) -> None:
    index = client(make_course(tmp_path)).get("/", headers=HTML).text
    text = _text(index[index.index("<main") :])
    assert "A test course" in text
    assert text.index("First things") < text.index("Chapter 3 Where code runs")
    assert text.index("Chapter 3 Where code runs") < text.index("Hello, Pyodide 3 steps")
    assert text.index("Hello, Pyodide 3 steps") < text.index("Then knobs")
    assert text.index("Then knobs") < text.index("Chapter 7 Turning knobs Knobs 2 steps")
    assert '<p class="continue" data-step-url="/lessons/{lesson}/{step}" hidden>' in index


class _Rows(HTMLParser):
    """The course map's rows: each lesson id with its ``data-steps`` attribute, decoded."""

    def __init__(self) -> None:
        super().__init__()
        self.steps: dict[str, list] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "li" and found.get("data-lesson"):
            self.steps[str(found["data-lesson"])] = json.loads(str(found["data-steps"]))


def test_each_row_carries_its_steps_exercises_in_compact_json(tmp_path: Path) -> None:
    """The page counts a lesson's steps done from its row; a row is a few hundred bytes of a
    page of hundreds of rows, so its JSON is written without spaces or escaped quotes."""
    lessons = make_course(tmp_path)
    index = client(lessons).get("/", headers=HTML).text
    rows = _Rows()
    rows.feed(index)
    app = create_app(Settings(lessons_dir=lessons))
    for lesson_id, lesson in app.state.site.catalog.lessons.items():
        expected = [[s.number, [e.id for e in s.exercises]] for s in lesson.steps]
        assert rows.steps[lesson_id] == expected
    assert any(ids for steps in rows.steps.values() for _, ids in steps)
    assert "&#34;" not in index


def test_course_order_beats_folder_order(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    course = lessons / "course.yaml"
    course.write_text(course.read_text().replace("- hello", "- KEEP").replace("- knobs", "- hello"))
    course.write_text(course.read_text().replace("- KEEP", "- knobs"))
    text = _text(client(lessons).get("/", headers=HTML).text)
    assert text.index("Knobs 2 steps") < text.index("Hello, Pyodide 3 steps")


def test_the_last_step_of_a_lesson_links_to_the_next_lesson(tmp_path: Path) -> None:
    c = client(make_course(tmp_path))
    last = c.get("/lessons/hello/3", headers=HTML).text
    assert '<a class="next-lesson" href="/lessons/knobs/1">Next lesson: Knobs</a>' in last
    assert "Chapter 3 · Where code runs · step 3 of 3" in last
    assert "next-lesson" not in c.get("/lessons/hello/2", headers=HTML).text
    assert "next-lesson" not in c.get("/lessons/knobs/2", headers=HTML).text  # the course's last


def test_a_broken_lesson_shows_where_it_belongs(tmp_path: Path) -> None:
    lessons = make_course(tmp_path, broken=True)
    learners = _text(client(lessons).get("/", headers=HTML).text)
    assert "Knobs 2 steps A lesson being written unavailable: this lesson is being fixed" in (
        learners
    )
    assert "01-a.md" not in learners
    author = _text(client(lessons, dev=True).get("/", headers=HTML).text)
    assert f"{lessons / 'broken' / '01-a.md'}:8 : Python syntax error" in author


def test_prose_links_become_step_urls_with_cell_and_heading_anchors(tmp_path: Path) -> None:
    page = client(make_course(tmp_path)).get("/lessons/hello/1", headers=HTML).text
    assert '<h2 id="further-on">Further on</h2>' in page
    for href in (
        "/lessons/knobs/1",
        "/lessons/knobs/2",
        "/lessons/knobs/2#cell-plain",
        "/lessons/hello/3#cell-double",
        "/lessons/hello/1#further-on",
    ):
        assert f'href="{href}"' in page
    assert "lesson:" not in page


def test_search_documents_hold_each_section_with_its_heading_url(tmp_path: Path) -> None:
    documents = client(make_course(tmp_path)).get("/search.json").json()
    further = next(d for d in documents if d["heading"] == "Further on")
    assert further["url"] == "/lessons/hello/1#further-on"
    assert "knobs lesson" in further["text"]
    top = next(d for d in documents if d["url"] == "/lessons/hello/1")
    assert 'print("platform:", sys.platform)' in top["code"]
    assert {d["lesson"] for d in documents} == {"Hello, Pyodide", "Knobs"}


def test_export_refuses_a_broken_course_naming_each_problem(tmp_path: Path) -> None:
    lessons = make_course(tmp_path, broken=True)
    step = lessons / "knobs" / "01-knobs.md"
    step.write_text(step.read_text() + "\nSee [it](lesson:hello/7).\n")
    with pytest.raises(ExportError) as caught:
        export_site(Settings(lessons_dir=lessons), tmp_path / "site")
    message = str(caught.value)
    assert f"{lessons / 'broken' / '01-a.md'}:8: Python syntax error" in message
    assert "link to a missing step 7 of 'hello': it has steps 1 to 3" in message


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(found["id"])
        for name in ("href", "src"):
            if found.get(name):
                self.urls.append(found[name])


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""


def test_every_internal_link_of_an_export_under_a_base_resolves(tmp_path: Path) -> None:
    """Crawl the export from its index, served below /course/ by a plain static server."""
    lessons = make_course(tmp_path)
    root = tmp_path / "host"
    export_site(Settings(lessons_dir=lessons), root / "course", base_url="/course/")
    with plain_server(root) as host:
        start = f"{host}/course/"
        seen, queue, broken, anchors = {start}, [start], [], []
        pages: dict[str, set[str]] = {}
        while queue:
            url = queue.pop()
            status, body = _get(url)
            if status != 200:
                broken.append(url)
                continue
            if not (url.endswith("/") or url.endswith(".html")):
                continue
            parser = _Links()
            parser.feed(body.decode("utf-8"))
            pages[url] = parser.ids
            for link in parser.urls:
                assert not link.startswith("lesson:"), f"{url} keeps a course link as written"
                target = urllib.parse.urljoin(url, link)
                if not target.startswith(host) or link.startswith("data:"):
                    continue
                page, _, fragment = target.partition("#")
                assert page.startswith(start), f"{url} links outside the base: {link}"
                if fragment:
                    anchors.append((page, fragment, url))
                if page not in seen:
                    seen.add(page)
                    queue.append(page)
    assert broken == []
    assert f"{start}lessons/knobs/2/" in pages
    for page, fragment, source in anchors:
        assert fragment in pages[page], f"{source} links to a missing #{fragment} of {page}"
    assert json.loads(_get_file(root / "course" / "search.json"))[0]["url"].startswith("/course/")


def _get_file(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_a_lesson_listed_in_the_course_file_needs_no_chapter_line(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    meta = lessons / "hello" / "lesson.yaml"
    meta.write_text("".join(x for x in meta.read_text().splitlines(True) if "chapter" not in x))
    assert "chapter" not in meta.read_text()
    assert validate([lessons]).ok
    page = _text(client(lessons).get("/lessons/hello/1", headers=HTML).text)
    assert "Chapter 3 · Where code runs · step 1 of 3" in page
    (lessons / "course.yaml").unlink()  # no course file: no chapter, and no stray separator
    page = _text(client(lessons).get("/lessons/hello/1", headers=HTML).text)
    assert re.search(r"(?<!· )step 1 of 3", page)
