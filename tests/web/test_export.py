"""``promptdojo export`` without a browser: what it writes, under which URLs, and its refusals."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from promptdojo.cli import app
from promptdojo.web.app import create_app
from promptdojo.web.export import MARKER, ExportError, export_site
from promptdojo.web.settings import Settings
from promptdojo.web.static_host import headers_file, matches, parse_headers_file
from promptdojo.web.urls import BaseUrlError, Urls, normalise_base

URL = re.compile(r'(?:href|src)="([^"]+)"')


@pytest.fixture
def lessons(fixture_lessons: Path, tmp_path: Path) -> Path:
    """Fixture lessons that need no package."""
    for name in ("hello", "runaway"):
        shutil.copytree(fixture_lessons / name, tmp_path / "lessons" / name)
    return tmp_path / "lessons"


def settings(lessons: Path, tmp: Path) -> Settings:
    return Settings(lessons_dir=lessons, package_cache_dir=tmp / "pkgs")


def test_every_url_is_below_the_base_and_names_an_exported_file(
    lessons: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    result = export_site(settings(lessons, tmp_path), out, base_url="course")
    # The reference's pages link relatively, and test_reference follows their links.
    pages = sorted(p for p in out.rglob("*.html") if not p.is_relative_to(out / "reference"))
    assert out / "lessons" / "runaway" / "3" / "index.html" in pages
    for page in pages:
        html = page.read_text()
        meta = re.search(r'name="promptdojo-kernel" content="([^"]+)"', html)
        urls = URL.findall(html)
        if meta:
            config = json.loads(meta.group(1).replace("&#34;", '"').replace("&amp;", "&"))
            urls += [config["workerUrl"], config["bundleUrl"], config["pyodideUrl"] + "pyodide.mjs"]
        for url in urls:
            if url.startswith(("data:", "1/")):  # 1/: a lesson's own URL sends to its first step
                continue
            assert url.startswith("/course/"), f"{page}: {url}"
            target = out / url.removeprefix("/course/")
            assert target.is_file() or (target / "index.html").is_file(), (
                f"{page}: {url} is missing"
            )
    sw = (out / "sw.js").read_text()
    assert f'"version":"{result.version}"' in sw
    assert '"/course/lessons/hello/1/"' in sw
    assert "sourceMappingURL" not in sw.splitlines()[-1]
    assert not (out / "assets" / "live.js").exists()
    assert "EventSource" not in "".join(p.read_text() for p in out.glob("assets/*.js"))


def test_a_record_in_the_wrong_shape_is_left_out_of_the_export(
    lessons: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    record = lessons / "hello" / "recorded" / "01-where-am-i.json"
    record.write_text('{"cell-1": {"stdout": "x", "value": "42"}}')
    out = tmp_path / "site"
    export_site(settings(lessons, tmp_path), out)
    page = (out / "lessons" / "hello" / "1" / "index.html").read_text()
    assert "recorded output" not in page
    assert "recorded output" in (out / "lessons" / "hello" / "3" / "index.html").read_text()
    assert f"{record}:1: the record is in the wrong shape at cell-1/value" in caplog.text


def test_a_missing_wheel_names_the_prefetch_command_and_writes_nothing(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    with pytest.raises(ExportError, match=r"promptdojo pyodide fetch numpy"):
        export_site(settings(fixture_lessons, tmp_path), out, ["needs-numpy"])
    assert not out.exists()


def test_a_folder_that_is_no_export_is_never_overwritten(lessons: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me")
    with pytest.raises(ExportError, match="not empty"):
        export_site(settings(lessons, tmp_path), out)
    assert (out / "thesis.tex").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_new_export_replaces_the_old_one_whole(lessons: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export_site(settings(lessons, tmp_path), out)
    (out / "stale.txt").write_text("from before")
    export_site(settings(lessons, tmp_path), out, ["hello"])
    assert (out / MARKER).is_file()
    assert not (out / "stale.txt").exists()
    assert not (out / "lessons" / "runaway").exists()


def test_unknown_lessons_are_named(lessons: Path, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="no lesson called nope; the lessons are: hello, runaway"):
        export_site(settings(lessons, tmp_path), tmp_path / "site", ["nope"])


def test_the_headers_file_says_what_the_server_says(lessons: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    export_site(settings(lessons, tmp_path), out, base_url="/course/")
    rules = parse_headers_file((out / "_headers").read_text())

    def headers(path: str) -> dict[str, str]:
        found = [h for pattern, hs in rules if matches(pattern, path) for h in hs]
        assert len({n for n, _ in found}) == len(found), f"{path}: a header set twice: {found}"
        return dict(found)

    wasm = next(out.glob("assets/pyodide/*/pyodide.asm.wasm")).relative_to(out).as_posix()
    assert headers(f"/course/{wasm}")["Content-Type"] == "application/wasm"
    assert headers(f"/course/{wasm}")["Cache-Control"].endswith("immutable")
    page = headers("/course/lessons/hello/1/")
    assert page["Cache-Control"] == "no-cache"
    assert page["Cross-Origin-Embedder-Policy"] == "require-corp"
    assert "wasm-unsafe-eval" in page["Content-Security-Policy"]
    assert headers("/course/sw.js")["Cache-Control"] == "no-cache"


def test_the_server_serves_the_same_service_worker(lessons: Path, tmp_path: Path) -> None:
    client = TestClient(create_app(settings(lessons, tmp_path)))
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.headers["cache-control"] == "no-cache"
    config = json.loads(
        response.text.split("\n", 1)[0].removeprefix("self.promptdojoCourse = ")[:-1]
    )
    assert "/lessons/runaway/2" in config["pages"]
    assert config["headers"]["cross-origin-opener-policy"] == "same-origin"
    assert all(client.get(url).status_code == 200 for url in config["files"] + config["pages"])
    # A lesson edited under the server (a reload makes a new catalog) is a new version.
    step = lessons / "hello" / "01-where-am-i.md"
    step.write_text(step.read_text() + "\nMore prose.\n")
    from promptdojo.web.catalog import Catalog

    app = client.app
    app.state.site.catalog = Catalog.load(lessons, app.state.site.packages.lock)
    assert client.get("/sw.js").text.split("\n", 1)[0] != response.text.split("\n", 1)[0]


@pytest.mark.parametrize("given", ["https://example.org/course/", "/a?b"])
def test_a_base_url_is_a_path(given: str) -> None:
    with pytest.raises(BaseUrlError, match="must be a"):
        normalise_base(given)


HOSTILE_BASES = [
    "\\\\evil.example\\",  # a browser reads \\host\ as //host/: another site
    "//evil.example/",
    "/a//b/",
    '/course"><script>alert(1)</script>/',
    "/it's/",
    "/a\n/*\n  X-Injected: 1\n/b/",
    "/course/\n",
    " /course/",
    "/a b/",
    "/../",
    "/a/../b/",
    "/./",
    "/%2e%2e/",
    "/caf%C3%A9/",
    "/a#b/",
    "/a;b/",
    "/café/",
]


@pytest.mark.parametrize("given", HOSTILE_BASES)
def test_a_base_url_must_be_a_plain_path(given: str) -> None:
    with pytest.raises(BaseUrlError, match="must be a plain path of URL-safe segments"):
        normalise_base(given)
    with pytest.raises(BaseUrlError):
        Urls(given)


@pytest.mark.parametrize("given", ["\\\\evil.example\\", "/a\n/*\n  X: 1\n/b/", '/"x/'])
def test_export_refuses_a_hostile_base_url_and_says_what_is_allowed(
    lessons: Path, tmp_path: Path, given: str
) -> None:
    done = CliRunner().invoke(
        app, ["export", str(tmp_path / "out"), "--lessons-dir", str(lessons), "--base-url", given]
    )
    assert done.exit_code == 2
    assert "Invalid value for --base-url" in done.output
    text = " ".join(done.output.replace("│", " ").split())  # one line, without the box
    assert "must be a plain path of URL-safe segments such as /, /course/ or /a-b/c_d/" in text
    assert not (tmp_path / "out").exists()


def test_base_urls_are_normalised() -> None:
    assert normalise_base("course") == "/course/"
    assert normalise_base("/a/b") == "/a/b/"
    assert normalise_base("/") == "/"


def test_big_files_get_compressed_twins_that_pages_and_the_worker_name(
    lessons: Path, tmp_path: Path
) -> None:
    import gzip

    import zstandard

    out = tmp_path / "site"
    compressed = Settings(
        lessons_dir=lessons,
        package_cache_dir=tmp_path / "pkgs",
        compressed_cache_dir=tmp_path / "compressed",
    )
    export_site(compressed, out)
    config = json.loads(
        (out / "sw.js").read_text().split("\n", 1)[0].removeprefix("self.promptdojoCourse = ")[:-1]
    )
    twins = config["twins"]
    wasm = next(url for url in twins if url.endswith("pyodide.asm.wasm"))
    assert twins[wasm] == [wasm + ".zst", "zstd"]
    loader = next(url for url in twins if url.endswith(("pyodide.asm.mjs", "pyodide.asm.js")))
    assert twins[loader] == [loader + ".gz", "gzip"]
    decode = {"zstd": zstandard.ZstdDecompressor().decompress, "gzip": gzip.decompress}
    for url, (twin, coding) in twins.items():
        plain, packed = (out / url.lstrip("/")).read_bytes(), (out / twin.lstrip("/")).read_bytes()
        assert decode[coding](packed) == plain, url
        assert len(packed) < 0.9 * len(plain), url
    # The offline copy keeps what pages fetch: the twins, not the files they stand for.
    assert set(twins).isdisjoint(config["files"])
    assert {twin for twin, _ in twins.values()} <= set(config["files"])
    page = (out / "lessons" / "hello" / "1" / "index.html").read_text()
    assert "pyodide.asm.wasm.zst" in page
    assert (out / wasm.lstrip("/")).stat().st_size > 3 * (
        out / (wasm + ".zst").lstrip("/")
    ).stat().st_size


def test_an_export_without_a_compressed_cache_has_no_twins(lessons: Path, tmp_path: Path) -> None:
    export_site(settings(lessons, tmp_path), tmp_path / "site")
    assert not list((tmp_path / "site").rglob("*.zst"))

    assert normalise_base("") == "/"
    assert normalise_base("/a-b/c_d/") == "/a-b/c_d/"
    assert normalise_base("/v1.2/~me/") == "/v1.2/~me/"


def test_the_headers_file_refuses_a_path_that_would_add_rules() -> None:
    with pytest.raises(ValueError, match="white space"):
        headers_file("/", ["lessons/a\n/*\n  X-Injected: 1/index.html"])
