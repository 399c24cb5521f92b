"""One output rule: the page's live output and its recorded output show the same representation.

The rule is Python's (``promptdojo.kernel.SHOWN_FIRST``); the server renders recorded outputs with
it and passes it, with the other limits the page shares with Python, in the kernel config.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.kernel import HTML_FRAME_HEAD, SHOWN_FIRST, shown_as
from promptdojo.pyodide.limits import STOP_GRACE_SECONDS
from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings
from tests.conftest import FIXTURE_LESSONS

HTML = {"accept": "text/html"}


def _kernel_config(text: str) -> dict:
    raw = re.search(r'<meta name="promptdojo-kernel" content="([^"]*)">', text)
    assert raw is not None
    return json.loads(html.unescape(raw.group(1)))


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"text/plain": "1", "text/html": "<b>1</b>", "image/svg+xml": "<svg/>"}, "text/html"),
        ({"text/plain": "1", "image/svg+xml": "<svg/>"}, "image/svg+xml"),
        ({"text/plain": "1"}, "text/plain"),
        ({}, None),
    ],
)
def test_the_richest_representation_shows(value: dict[str, str], shown: str | None) -> None:
    assert shown_as(value) == shown


def test_the_page_gets_the_rule_and_the_limits_from_python(client: TestClient) -> None:
    config = _kernel_config(client.get("/lessons/hello/1", headers=HTML).text)
    assert config["outputOrder"] == list(SHOWN_FIRST)
    assert config["htmlFrameHead"] == HTML_FRAME_HEAD
    assert config["stopGraceMs"] == STOP_GRACE_SECONDS * 1000
    assert config["timeLimit"] == 10  # the lesson's own (lesson.yaml)


def _lesson_with_recorded(tmp_path: Path, value: dict[str, str]) -> TestClient:
    lessons = tmp_path / "lessons"
    shutil.copytree(FIXTURE_LESSONS / "hello", lessons / "hello")
    record = lessons / "hello" / "recorded" / "01-where-am-i.json"
    outputs = json.loads(record.read_text())
    outputs["cell-2"]["value"] = value
    record.write_text(json.dumps(outputs))
    app = create_app(Settings(lessons_dir=lessons, package_cache_dir=tmp_path / "pkgs"))
    return TestClient(app)


def _recorded_value(text: str) -> str:
    section = text[text.index('id="cell-cell-2"') :]
    return section[section.index('class="recorded"') : section.index("</output>")]


def test_a_recorded_html_value_shows_in_a_frame_that_runs_nothing(tmp_path: Path) -> None:
    client = _lesson_with_recorded(
        tmp_path, {"text/plain": "t", "text/html": "<script>x()</script>"}
    )
    shown = _recorded_value(client.get("/lessons/hello/1", headers=HTML).text)
    frame = re.search(r"<iframe ([^>]*)></iframe>", shown)
    assert frame is not None
    assert 'sandbox="allow-same-origin"' in frame.group(1)
    srcdoc = re.search(r'srcdoc="([^"]*)"', frame.group(1))
    assert srcdoc is not None
    assert html.unescape(srcdoc.group(1)) == HTML_FRAME_HEAD + "<script>x()</script>"
    assert "<script>x()" not in shown
    assert '<pre class="value">' not in shown


def test_a_recorded_picture_shows_as_an_image(tmp_path: Path) -> None:
    client = _lesson_with_recorded(tmp_path, {"text/plain": "t", "image/svg+xml": "<svg/>"})
    shown = _recorded_value(client.get("/lessons/hello/1", headers=HTML).text)
    assert '<img class="value"' in shown
    assert "<iframe" not in shown
