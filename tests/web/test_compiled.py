"""The compiled wheels a server offers (promptdojo.web.compiled): named in the step page's kernel
config beside their wheel, served compressed under their content hash, kept in the offline copy.
And the learner bundle it sends: with its modules' bytecode, or without it where it cannot be
made."""

from __future__ import annotations

import hashlib
import html
import io
import json
import logging
import re
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
import zstandard
from fastapi.testclient import TestClient

from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.bytecode import compiled_bundle
from promptdojo.pyodide.release import Release
from promptdojo.web.app import create_app
from promptdojo.web.compiled import learner_bundles
from promptdojo.web.settings import Settings
from tests.e2e.conftest import COMPRESSED, SNAPSHOTS

STEP = "/lessons/needs-numpy/1"


def settings(lessons: Path, release: Release, tmp: Path) -> Settings:
    return Settings(
        lessons_dir=lessons,
        pyodide_dir=release.path,
        package_cache_dir=tmp / "packages",
        snapshot_cache_dir=SNAPSHOTS,
        compressed_cache_dir=COMPRESSED,
    )


@pytest.fixture(scope="module")
def client(
    fixture_lessons: Path, numpy_release: Release, tmp_path_factory: pytest.TempPathFactory
) -> TestClient:
    tmp = tmp_path_factory.mktemp("compiled")
    return TestClient(create_app(settings(fixture_lessons, numpy_release, tmp)))


def kernel_config(client: TestClient) -> dict:
    """The needs-numpy step's kernel config."""
    page = client.get(STEP).text
    meta = re.search(r'<meta name="promptdojo-kernel" content="([^"]+)"', page)
    assert meta is not None
    return json.loads(html.unescape(meta.group(1)))


def numpy_wheel(client: TestClient) -> dict:
    """The numpy entry of the needs-numpy step's kernel config."""
    wheels = kernel_config(client)["wheels"]
    return next(wheel for wheel in wheels if wheel["name"] == "numpy")


def test_the_page_names_the_compiled_wheel_beside_the_wheel(client: TestClient) -> None:
    wheel = numpy_wheel(client)
    compiled = wheel["compiled"]
    assert wheel["url"] == f"/packages/{wheel['file_name']}"
    stem = wheel["file_name"].removesuffix(".whl")
    assert compiled["file_name"] == f"{stem}-{compiled['sha256'][:16]}.zip"
    assert compiled["url"] == f"/packages/compiled/{compiled['file_name']}"


def test_the_compiled_wheel_is_sent_in_zstd_and_is_what_the_page_checks(
    client: TestClient,
) -> None:
    compiled = numpy_wheel(client)["compiled"]
    with client.stream("GET", compiled["url"], headers={"accept-encoding": "zstd, br"}) as answer:
        assert answer.status_code == 200
        assert answer.headers["content-encoding"] == "zstd"
        assert "immutable" in answer.headers["cache-control"]
        sent = b"".join(answer.iter_raw())
    data = zstandard.ZstdDecompressor().decompress(sent, max_output_size=64 << 20)
    assert hashlib.sha256(data).hexdigest() == compiled["sha256"]
    # Decoded bytes: the page counts them as they come (the learner bundle starts at 9/10).
    assert compiled["size"] == len(data)
    assert len(sent) < len(data) / 4
    plain = client.get(compiled["url"], headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert hashlib.sha256(plain.content).hexdigest() == compiled["sha256"]
    assert client.get("/packages/compiled/numpy-0.zip").status_code == 404


def test_the_offline_copy_keeps_the_compiled_wheel(client: TestClient) -> None:
    compiled = numpy_wheel(client)["compiled"]
    script = client.get("/sw.js").text
    course = json.loads(script.split("\n", 1)[0].removeprefix("self.promptdojoCourse = ")[:-1])
    assert compiled["url"] in course["files"]


def test_without_a_snapshot_cache_there_is_no_compiled_wheel(
    fixture_lessons: Path, numpy_release: Release, tmp_path: Path
) -> None:
    app = create_app(
        replace(settings(fixture_lessons, numpy_release, tmp_path), snapshot_cache_dir=None)
    )
    assert "compiled" not in numpy_wheel(TestClient(app))


def test_the_page_gets_the_learner_bundle_with_its_modules_bytecode(
    client: TestClient, numpy_release: Release
) -> None:
    config = kernel_config(client)
    compiled = compiled_bundle(numpy_release.path, build_bundle(), SNAPSHOTS)
    assert config["bundleUrl"] == f"/bundle/{compiled.filename}"
    sent = client.get(config["bundleUrl"])
    assert sent.status_code == 200
    assert sent.content == compiled.data
    with zipfile.ZipFile(io.BytesIO(sent.content)) as archive:
        assert "promptdojo/__pycache__/kernel.cpython-313.pyc" in archive.namelist()


def test_without_node_the_page_gets_the_bundle_itself(
    fixture_lessons: Path, numpy_release: Release, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    core = tmp_path / "core"  # no interpreter in it: Node cannot compile anything
    core.mkdir()
    with caplog.at_level(logging.WARNING, logger="promptdojo.web"):
        plain, sent = learner_bundles(settings(fixture_lessons, numpy_release, tmp_path), core)
    assert sent == plain == build_bundle()
    assert "pages will compile the learner library themselves" in caplog.text
    off = replace(settings(fixture_lessons, numpy_release, tmp_path), snapshot_cache_dir=None)
    assert learner_bundles(off, numpy_release.path) == (plain, plain)


def test_a_cache_that_cannot_be_written_sends_the_bundle_itself(
    fixture_lessons: Path, numpy_release: Release, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    unwritable = replace(
        settings(fixture_lessons, numpy_release, tmp_path), snapshot_cache_dir=blocked
    )
    with caplog.at_level(logging.WARNING, logger="promptdojo.web"):
        plain, sent = learner_bundles(unwritable, numpy_release.path)
    assert sent == plain == build_bundle()
    assert "pages will compile the learner library themselves" in caplog.text
