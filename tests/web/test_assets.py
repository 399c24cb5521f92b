"""Assets, the Pyodide core, the learner bundle, and the headers that make the page isolated."""

from __future__ import annotations

import io
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.pyodide.dist import build_dir
from promptdojo.web.app import create_app
from promptdojo.web.assets import AssetManifest
from promptdojo.web.settings import Settings


def _config_value(client: TestClient, name: str) -> str:
    text = client.get("/lessons/hello/1").text
    match = re.search(rf"&#34;{name}&#34;: &#34;([^&]*)&#34;", text)
    assert match is not None, name
    return match.group(1)


def test_every_response_is_cross_origin_isolated_and_locked_down(client: TestClient) -> None:
    for url in ("/", "/lessons/hello/1", "/lessons/nope/1", _config_value(client, "workerUrl")):
        headers = client.get(url).headers
        assert headers["cross-origin-opener-policy"] == "same-origin", url
        assert headers["cross-origin-embedder-policy"] == "require-corp", url
        assert headers["x-content-type-options"] == "nosniff", url
        csp = headers["content-security-policy"]
        script_src = next(d for d in csp.split("; ") if d.startswith("script-src"))
        assert "'unsafe-inline'" not in script_src
        assert "'unsafe-eval'" not in script_src
        assert "'wasm-unsafe-eval'" in script_src


def test_hashed_assets_are_immutable_and_pages_are_not(client: TestClient) -> None:
    worker = client.get(_config_value(client, "workerUrl"))
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert client.get("/lessons/hello/1").headers["cache-control"] == "no-cache"


def test_pyodide_core_is_served_with_the_right_types(client: TestClient) -> None:
    base = _config_value(client, "pyodideUrl")
    wasm = client.get(base + "pyodide.asm.wasm")
    assert wasm.status_code == 200
    assert wasm.headers["content-type"] == "application/wasm"
    assert wasm.content[:4] == b"\0asm"
    module = client.get(base + "pyodide.mjs")
    assert module.headers["content-type"].startswith("text/javascript")


def test_learner_bundle_holds_the_learner_room_only(client: TestClient) -> None:
    url = _config_value(client, "bundleUrl")
    response = client.get(url)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    names = zipfile.ZipFile(io.BytesIO(response.content)).namelist()
    assert "promptdojo/__init__.py" in names
    assert "promptdojo/kernel.py" in names
    assert not [n for n in names if n.startswith(("promptdojo/web", "promptdojo/course"))]
    assert not [n for n in names if n.endswith("cli.py") or "__pycache__" in n]


def test_a_stale_bundle_name_is_a_404(client: TestClient) -> None:
    assert client.get("/bundle/promptdojo-0000000000000000.zip").status_code == 404


def test_missing_package_says_what_to_do(client: TestClient) -> None:
    response = client.get("/packages/numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl")
    assert response.status_code == 404
    detail = response.json()["detail"]
    assert "numpy (numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl)" in detail
    assert "is not in the server's package cache" in detail
    assert "`promptdojo pyodide fetch numpy`" in detail


def test_a_file_the_lock_does_not_name_is_a_404(client: TestClient) -> None:
    response = client.get("/packages/surprise-1.0-py3-none-any.whl")
    assert response.status_code == 404
    assert response.json()["detail"] == (
        "surprise-1.0-py3-none-any.whl is not a package of Pyodide 314.0.7"
    )


def test_assets_cannot_reach_outside_their_folder(client: TestClient) -> None:
    for url in (
        "/assets/../pyproject.toml",
        "/assets/%2e%2e/%2e%2e/pyproject.toml",
        "/assets/..%2f..%2fpyproject.toml",
        "/packages/..%2f..%2fpyproject.toml",
        "/bundle/..%2fpyproject.toml",
    ):
        response = client.get(url)
        assert response.status_code == 404, url
        assert b"[project]" not in response.content


def test_assets_are_sent_precompressed_by_accept_encoding(client: TestClient) -> None:
    base = _config_value(client, "pyodideUrl")
    raw = client.get(base + "pyodide.asm.wasm", headers={"accept-encoding": "identity"})
    assert "content-encoding" not in raw.headers
    assert raw.headers["vary"] == "accept-encoding"
    for encoding in ("br", "gzip"):
        response = client.get(base + "pyodide.asm.wasm", headers={"accept-encoding": encoding})
        assert response.headers["content-encoding"] == encoding
        assert response.headers["content-type"] == "application/wasm"
        assert response.headers["vary"] == "accept-encoding"
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.content == raw.content  # httpx decodes br and gzip
        assert int(response.headers["content-length"]) < len(raw.content) // 2
    both = client.get(base + "pyodide.asm.wasm", headers={"accept-encoding": "gzip, br"})
    assert both.headers["content-encoding"] == "br"


def test_zips_are_not_recompressed(client: TestClient) -> None:
    base = _config_value(client, "pyodideUrl")
    response = client.get(base + "python_stdlib.zip", headers={"accept-encoding": "br, gzip"})
    assert "content-encoding" not in response.headers


def test_a_refused_coding_is_never_sent(client: TestClient) -> None:
    base = _config_value(client, "pyodideUrl")
    url = base + "pyodide.asm.wasm"
    assert client.get(url, headers={"accept-encoding": "br;q=0, gzip"}).headers[
        "content-encoding"
    ] == ("gzip")
    refused = client.get(url, headers={"accept-encoding": "br; q=0.0, gzip;q=0"})
    assert "content-encoding" not in refused.headers


@pytest.fixture(scope="module")
def compressed_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of compressed copies for this module: the core's wasm is compressed once."""
    return tmp_path_factory.mktemp("compressed")


def test_the_built_in_core_goes_out_in_zstd_given_a_cache(
    fixture_lessons: Path, tmp_path: Path, compressed_cache: Path
) -> None:
    settings = Settings(
        lessons_dir=fixture_lessons,
        package_cache_dir=tmp_path / "pkgs",
        compressed_cache_dir=compressed_cache,
    )
    client = TestClient(create_app(settings))
    base = _config_value(client, "pyodideUrl")
    wasm = client.get(base + "pyodide.asm.wasm", headers={"accept-encoding": "gzip, br, zstd"})
    assert wasm.headers["content-encoding"] == "zstd"
    assert wasm.headers["content-type"] == "application/wasm"
    app_js = _config_value(client, "workerUrl")
    worker = client.get(app_js, headers={"accept-encoding": "gzip, br, zstd"})
    assert worker.headers["content-encoding"] == "br"  # the build's copy beside it


def test_an_unpacked_release_is_sent_compressed_as_the_built_in_core_is(
    fixture_lessons: Path, tmp_path: Path, compressed_cache: Path
) -> None:
    built = AssetManifest.load(build_dir()).pyodide_dir
    release = tmp_path / "pyodide"
    release.mkdir()
    for source in built.iterdir():
        if not source.name.endswith((".br", ".gz")):
            shutil.copyfile(source, release / source.name)
    (release / "package.json").write_text('{"name": "pyodide", "version": "314.0.7"}')
    settings = Settings(
        lessons_dir=fixture_lessons,
        package_cache_dir=tmp_path / "pkgs",
        pyodide_dir=release,
        compressed_cache_dir=compressed_cache,
    )
    client = TestClient(create_app(settings))
    url = "/pyodide/314.0.7/pyodide.asm.wasm"
    raw = client.get(url, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in raw.headers
    assert raw.content == (release / "pyodide.asm.wasm").read_bytes()
    for accepted, coding in (
        ("gzip, deflate, br, zstd", "zstd"),
        ("gzip, br", "br"),
        ("gzip", "gzip"),
        ("zstd;q=0, gzip", "gzip"),
    ):
        response = client.get(url, headers={"accept-encoding": accepted})
        assert response.headers["content-encoding"] == coding, accepted
        assert response.headers["content-type"] == "application/wasm"
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert int(response.headers["content-length"]) < len(raw.content) // 2, coding
        if coding != "zstd":  # httpx decodes br and gzip
            assert response.content == raw.content
    loader = client.get("/pyodide/314.0.7/pyodide.asm.mjs", headers={"accept-encoding": "br"})
    assert loader.headers["content-encoding"] == "br"
    stdlib = client.get("/pyodide/314.0.7/python_stdlib.zip", headers={"accept-encoding": "br"})
    assert "content-encoding" not in stdlib.headers
