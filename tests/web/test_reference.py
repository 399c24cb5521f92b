"""The learner library's reference: pdoc's pages at ``/reference/``, served and exported."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urljoin

import pytest
from fastapi.testclient import TestClient

import promptdojo.display
from promptdojo.web.app import create_app
from promptdojo.web.export import export_site
from promptdojo.web.headers import CONTENT_SECURITY_POLICY
from promptdojo.web.reference import ReferenceBuildError, picture
from promptdojo.web.settings import Settings
from promptdojo.web.static_host import matches, parse_headers_file

LINK = re.compile(r'(?:href|src)="([^"]+)"')
IMAGE = re.compile(r'<img src="([^"]+)" alt="What the example of (\w+) draws"')
HELPERS = sorted(
    name
    for name in promptdojo.display.__all__
    if callable(getattr(promptdojo.display, name))
    and not isinstance(getattr(promptdojo.display, name), type)
)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    lessons = Path(__file__).parents[1] / "fixtures" / "lessons"
    cache = tmp_path_factory.mktemp("pkgs")
    return TestClient(create_app(Settings(lessons_dir=lessons, package_cache_dir=cache)))


def test_the_reference_is_served_under_the_policy_with_docstrings(client: TestClient) -> None:
    index = client.get("/reference/")
    assert index.status_code == 200
    assert index.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert 'href="promptdojo/display.html"' in index.text
    page = client.get("/reference/promptdojo/display.html")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    first_line = promptdojo.display.__doc__.strip().splitlines()[0]
    assert first_line in page.text
    # The policy allows no inline script: the pages have none at all, nor handlers.
    for text in (index.text, page.text):
        assert "<script" not in text
        assert not re.search(r"\son[a-z]+=", text)


def test_each_display_helper_shows_the_picture_its_example_draws(client: TestClient) -> None:
    url = "/reference/promptdojo/display.html"
    images = dict((name, src) for src, name in IMAGE.findall(client.get(url).text))
    assert sorted(images) == HELPERS
    for name, src in images.items():
        drawn = client.get(urljoin(url, src))
        assert drawn.status_code == 200, name
        assert drawn.headers["content-type"] == "image/svg+xml"
        assert drawn.text == picture(name, getattr(promptdojo.display, name))
        assert drawn.text.startswith("<svg")


def test_the_reference_root_and_unknown_pages(client: TestClient) -> None:
    root = client.get("/reference", follow_redirects=False)
    assert root.headers["location"] == "/reference/"
    missing = client.get("/reference/promptdojo/nothing.html")
    assert missing.status_code == 404
    assert "/reference/" in missing.text


def test_a_helper_without_an_example_is_named() -> None:
    def plain() -> None:
        """Draws something, but says not how."""

    with pytest.raises(ReferenceBuildError, match=r"plain: its docstring needs an example"):
        picture("plain", plain)


def test_the_export_holds_the_reference_and_its_links_resolve(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    shutil.copytree(fixture_lessons / "hello", tmp_path / "lessons" / "hello")
    settings = Settings(lessons_dir=tmp_path / "lessons", package_cache_dir=tmp_path / "pkgs")
    out = tmp_path / "site"
    export_site(settings, out, base_url="/course/")
    pages = sorted((out / "reference").rglob("*.html"))
    assert out / "reference" / "index.html" in pages
    assert out / "reference" / "promptdojo" / "display.html" in pages
    pictures = 0
    for page in pages:
        public = "/course/" + page.relative_to(out).as_posix()
        for link in LINK.findall(page.read_text()):
            if link.startswith(("data:", "https://pdoc.dev")):
                continue
            url = urljoin(public, link).split("#")[0]
            assert url.startswith("/course/reference/"), f"{public}: {link}"
            target = out / url.removeprefix("/course/")
            assert target.is_file() or (target / "index.html").is_file(), f"{public}: {link}"
            pictures += url.endswith(".svg")
    assert pictures >= len(HELPERS)
    # A static host sends the reference what the server sends: the policy, revalidated.
    rules = parse_headers_file((out / "_headers").read_text())
    sent = dict(
        h
        for pattern, hs in rules
        if matches(pattern, "/course/reference/promptdojo/display.html")
        for h in hs
    )
    assert sent["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert sent["Cache-Control"] == "no-cache"
