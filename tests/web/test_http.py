"""HTTP rules every route keeps: HEAD wherever GET, errors never stored, Accept-Encoding's q=0."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from promptdojo.pyodide.dist import core_dir
from promptdojo.web import offline, pages, pyodide_files
from promptdojo.web.accept import accepts
from promptdojo.web.app import create_app
from promptdojo.web.package_store import PackageStore
from promptdojo.web.settings import Settings
from tests.support.snapshots import plant
from tests.support.upstream import GOOD, LOCK

HTML = {"accept": "text/html"}
TINYPKG = "tinypkg-1.0-py3-none-any.whl"


@pytest.fixture
def app(fixture_lessons: Path, tmp_path: Path):
    """An app with a snapshot, and a package store that holds one wheel."""
    plant(tmp_path / "snapshots", core_dir(), b"a planted snapshot " * 1000)
    app = create_app(
        Settings(
            lessons_dir=fixture_lessons,
            package_cache_dir=tmp_path / "pkgs",
            snapshot_cache_dir=tmp_path / "snapshots",
        )
    )
    release = tmp_path / "release"
    release.mkdir()
    (release / TINYPKG).write_bytes(GOOD)
    app.state.site.packages = PackageStore(LOCK, tmp_path / "cache", None, release_dir=release)
    return app


def served_urls(app) -> list[str]:
    """One URL of each kind the server serves."""
    state = app.state.site
    return [
        "/",
        "/lessons/hello/1",
        "/healthz",
        "/sw.js",
        "/assets/" + state.manifest.url("worker.js").removeprefix("/assets/"),
        f"{state.pyodide_url}pyodide.asm.wasm",
        f"/bundle/{state.bundle.filename}",
        f"/snapshot/{state.snapshot.filename}",
        f"/packages/{TINYPKG}",
        "/search.json",
    ]


def test_head_answers_wherever_get_does_with_the_same_headers_and_no_body(app) -> None:
    client = TestClient(app)
    for url in served_urls(app):
        got = client.get(url, headers=HTML)
        head = client.head(url, headers=HTML)
        assert (url, got.status_code, head.status_code) == (url, 200, 200)
        assert head.content == b""
        for name in ("content-type", "cache-control", "etag", "content-encoding"):
            assert head.headers.get(name) == got.headers.get(name), (url, name)


def test_every_route_that_answers_get_answers_head(app) -> None:
    every = [*app.routes, *pages.router.routes, *pyodide_files.router.routes]
    every += offline.router.routes
    routes = [r for r in every if isinstance(r, APIRoute) and "GET" in r.methods]
    assert len(routes) == 10  # search.json and the compiled wheels among them
    assert [r.path for r in routes if "HEAD" not in r.methods] == []


def test_error_responses_are_never_stored(app) -> None:
    client = TestClient(app, raise_server_exceptions=False)
    errors = [
        client.get("/lessons/nope/1", headers=HTML),  # the HTML 404 page
        client.get("/lessons/nope/1", headers={"accept": "*/*"}),  # plain text
        client.get("/assets/nothing.js"),  # JSON, from the static files
        client.get("/snapshot/snapshot-0000000000000000.bin"),
        client.get("/packages/other-1.0-py3-none-any.whl"),
        client.post("/"),  # 405
    ]
    app.state.site.catalog = None  # any page now fails inside the app: a 500
    errors.append(client.get("/", headers=HTML))
    for response in errors:
        assert response.status_code >= 400
        assert response.headers["cache-control"] == "no-store", response.request.url
        assert response.headers["cross-origin-opener-policy"] == "same-origin"
    assert errors[-1].status_code == 500


def test_a_coding_refused_with_q_0_is_never_sent(app) -> None:
    client = TestClient(app)
    asset = served_urls(app)[4]
    assert client.get(asset, headers={"accept-encoding": "br, gzip"}).headers[
        "content-encoding"
    ] == ("br")
    no_br = client.get(asset, headers={"accept-encoding": "br;q=0, gzip"})
    assert no_br.headers["content-encoding"] == "gzip"
    page = client.get("/lessons/hello/1", headers={"accept-encoding": "gzip;q=0"})
    assert "content-encoding" not in page.headers
    snapshot = served_urls(app)[7]
    refused = client.get(snapshot, headers={"accept-encoding": "gzip;q=0, *;q=0"})
    assert "content-encoding" not in refused.headers
    assert client.get(snapshot, headers={"accept-encoding": "*"}).headers["content-encoding"] == (
        "gzip"
    )


def test_accept_encoding_reads_q_values_wildcards_and_aliases() -> None:
    assert accepts("gzip, br", "br")
    assert not accepts("br;q=0, gzip", "br")
    assert not accepts("br; q=0.0", "br")
    assert accepts("br;q=0.5", "br")
    assert not accepts("br;q=oops", "br")
    assert accepts("*", "zstd")
    assert not accepts("*;q=0, gzip", "br")
    assert accepts("x-gzip", "gzip")
    assert not accepts("", "gzip")
    assert accepts("", "identity")
    assert not accepts("identity;q=0", "identity")
