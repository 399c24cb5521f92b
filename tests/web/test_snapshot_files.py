"""The snapshot route and the page's kernel config: what the worker restores, and its hash."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import logging
import re
import zipfile
from pathlib import Path

import brotli
import pytest
import zstandard
from fastapi.testclient import TestClient

from promptdojo.pyodide.dist import core_dir
from promptdojo.pyodide.snapshot import Snapshot
from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings
from promptdojo.web.site import snapshot_for
from tests.support.snapshots import plant

DATA = b"a planted snapshot " * 1000


def kernel_config(client: TestClient) -> dict:
    page = client.get("/lessons/hello/1").text
    meta = re.search(r'<meta name="promptdojo-kernel" content="([^"]+)"', page)
    assert meta is not None
    return json.loads(meta.group(1).replace("&#34;", '"').replace("&amp;", "&"))


def test_the_page_names_the_snapshot_and_it_is_served_immutable(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    plant(tmp_path / "snapshots", core_dir(), DATA)
    app = create_app(
        Settings(lessons_dir=fixture_lessons, snapshot_cache_dir=tmp_path / "snapshots")
    )
    client = TestClient(app)
    snapshot = kernel_config(client)["snapshot"]
    digest = hashlib.sha256(DATA).hexdigest()
    stdlib = app.state.site.snapshot.stdlib_sha256
    assert snapshot == {
        "url": f"/snapshot/snapshot-{digest[:16]}.bin",
        "sha256": digest,
        # Decoded bytes: the page counts them as they come (the wheels start halfway).
        "size": len(DATA),
        "stdlib": f"/snapshot/python_stdlib-{stdlib[:16]}.zip",
        # No package in it: the page installs the lesson's after the restore.
        "packages": None,
    }
    # The worker asks for it as it starts; the page itself does not (test_pages.py).
    # Precompressed: sent as stored (httpx would decode it; read the raw stream).
    with client.stream("GET", snapshot["url"], headers={"accept-encoding": "gzip"}) as response:
        raw = b"".join(response.iter_raw())
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert gzip.decompress(raw) == DATA
    plain = client.get(snapshot["url"], headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == DATA


def test_the_standard_library_made_with_the_snapshot_is_served_beside_it(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    # Pyodide's own archive, each member stored (promptdojo.pyodide.stdlib), under its hash.
    folder = plant(tmp_path / "snapshots", core_dir(), DATA)
    stored = (folder / "python_stdlib.zip").read_bytes()
    (folder / "python_stdlib.zip.zst").write_bytes(zstandard.ZstdCompressor().compress(stored))
    app = create_app(
        Settings(lessons_dir=fixture_lessons, snapshot_cache_dir=tmp_path / "snapshots")
    )
    client = TestClient(app)
    url = kernel_config(client)["snapshot"]["stdlib"]
    assert url == f"/snapshot/python_stdlib-{hashlib.sha256(stored).hexdigest()[:16]}.zip"
    with client.stream("GET", url, headers={"accept-encoding": "gzip, br, zstd"}) as response:
        raw = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "zstd"
    assert response.headers["content-type"] == "application/zip"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert zstandard.ZstdDecompressor().decompress(raw) == stored
    plain = client.get(url, headers={"accept-encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == stored
    with (
        zipfile.ZipFile(core_dir() / "python_stdlib.zip") as own,
        zipfile.ZipFile(io.BytesIO(stored)) as served,
    ):
        assert served.namelist() == own.namelist()
        assert {m.compress_type for m in served.infolist()} == {zipfile.ZIP_STORED}
        assert all(served.read(n) == own.read(n) for n in own.namelist()[::25])
    # Pages restoring the snapshot never ask for Pyodide's own: the offline copy leaves it out.
    sw = client.get("/sw.js").text
    assert url in sw
    assert "python_stdlib.zip" not in sw.replace(url, "")


def test_the_best_copy_the_browser_accepts_is_sent(fixture_lessons: Path, tmp_path: Path) -> None:
    # zstd before brotli before gzip: the boot decodes the snapshot while it compiles and
    # downloads everything else, and zstd is the cheapest of the three to decode.
    folder = plant(tmp_path / "snapshots", core_dir(), DATA)
    (folder / "snapshot.bin.zst").write_bytes(zstandard.ZstdCompressor().compress(DATA))
    (folder / "snapshot.bin.br").write_bytes(brotli.compress(DATA))
    client = TestClient(
        create_app(Settings(lessons_dir=fixture_lessons, snapshot_cache_dir=tmp_path / "snapshots"))
    )
    url = kernel_config(client)["snapshot"]["url"]
    decode = {
        "zstd": zstandard.ZstdDecompressor().decompress,
        "br": brotli.decompress,
        "gzip": gzip.decompress,
    }
    for accepted, sent in [
        ("gzip, deflate, br, zstd", "zstd"),  # Chromium's
        ("gzip, deflate, br", "br"),  # a browser without zstd (Safari)
        ("gzip", "gzip"),
    ]:
        with client.stream("GET", url, headers={"accept-encoding": accepted}) as response:
            raw = b"".join(response.iter_raw())
        assert response.headers["content-encoding"] == sent, accepted
        assert response.headers["vary"] == "accept-encoding"
        assert decode[sent](raw) == DATA


def test_another_snapshot_name_is_404_with_the_current_one(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    plant(tmp_path / "snapshots", core_dir(), DATA)
    app = create_app(
        Settings(lessons_dir=fixture_lessons, snapshot_cache_dir=tmp_path / "snapshots")
    )
    response = TestClient(app).get("/snapshot/snapshot-0000000000000000.bin")
    assert response.status_code == 404
    digest = hashlib.sha256(DATA).hexdigest()
    detail = response.json()["detail"]
    assert f"this server's are snapshot-{digest[:16]}.bin: reload the page" in detail, detail


def test_without_snapshots_the_page_boots_cold(client: TestClient) -> None:
    assert kernel_config(client)["snapshot"] is None
    response = client.get("/snapshot/snapshot-0000000000000000.bin")
    assert response.status_code == 404
    assert "this server boots Python cold" in response.json()["detail"]


def test_a_damaged_snapshot_in_the_cache_is_made_again_at_start(
    fixture_lessons: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Served under its good name until now: the bytes on disk no longer hash to the digest.
    recorded = hashlib.sha256(b"what was made").hexdigest()
    plant(tmp_path / "snapshots", core_dir(), DATA, digest=recorded)
    with caplog.at_level(logging.WARNING, logger="promptdojo.web"):
        app = create_app(
            Settings(lessons_dir=fixture_lessons, snapshot_cache_dir=tmp_path / "snapshots")
        )
    assert "the cached memory snapshot is damaged" in caplog.text
    assert f"does not match its recorded SHA-256 {recorded}" in caplog.text
    snapshot = app.state.site.snapshot
    assert snapshot.sha256 != recorded
    assert snapshot.problem() == ""
    assert kernel_config(TestClient(app))["snapshot"]["sha256"] == snapshot.sha256


def test_a_compressed_copy_that_decodes_to_other_bytes_is_damage(tmp_path: Path) -> None:
    folder = plant(tmp_path / "snapshots", core_dir(), DATA)
    stdlib = folder / "python_stdlib.zip"
    stored = stdlib.read_bytes()
    digest = hashlib.sha256(stored).hexdigest()
    snapshot = Snapshot(folder / "snapshot.bin", hashlib.sha256(DATA).hexdigest(), stdlib, digest)
    assert snapshot.problem() == ""
    (folder / "snapshot.bin.br").write_bytes(brotli.compress(DATA[:-1] + b"!"))
    assert snapshot.problem() == f"{folder / 'snapshot.bin.br'} does not decode to the snapshot"
    (folder / "snapshot.bin.br").write_bytes(b"not brotli at all")
    assert "cannot be read whole" in snapshot.problem()
    (folder / "snapshot.bin.br").unlink()
    # The standard library beside it is checked the same way.
    (folder / "python_stdlib.zip.gz").write_bytes(gzip.compress(stored[:-1]))
    assert snapshot.problem() == (
        f"{folder / 'python_stdlib.zip.gz'} does not decode to its standard library"
    )
    (folder / "python_stdlib.zip.gz").unlink()
    stdlib.write_bytes(stored[:-1])
    assert snapshot.problem() == f"{stdlib} does not match its recorded SHA-256 {digest}"


def test_a_lesson_restores_the_snapshot_that_holds_exactly_its_wheels(tmp_path: Path) -> None:
    """The snapshot with packages goes to the pages of a lesson whose wheels are the ones it
    holds, the same files with the same contents; every other lesson restores the plain one."""
    plain = Snapshot(tmp_path / "plain.bin", "a" * 64, tmp_path / "stdlib.zip", "b" * 64)
    numpy = {
        "name": "numpy",
        "file_name": "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl",
        "sha256": "c" * 64,
    }
    packaged = dataclasses.replace(
        plain, sha256="d" * 64, packages={"wheels": [[numpy["file_name"], numpy["sha256"]]]}
    )
    assert snapshot_for(plain, packaged, ["numpy"], [numpy]) is packaged
    assert snapshot_for(plain, packaged, [], []) is plain
    assert snapshot_for(plain, packaged, ["numpy"], [{**numpy, "sha256": "e" * 64}]) is plain
    other = {"name": "six", "file_name": "six-1.16.0-py2.py3-none-any.whl", "sha256": "f" * 64}
    assert snapshot_for(plain, packaged, ["numpy", "six"], [numpy, other]) is plain
    # A declared package the server has no wheel for: the page cannot load the libraries of
    # the packages it could have either, so it restores the plain one.
    assert snapshot_for(plain, packaged, ["numpy", "scipy"], [numpy]) is plain
    assert snapshot_for(plain, None, ["numpy"], [numpy]) is plain
    assert snapshot_for(None, packaged, ["numpy"], [numpy]) is packaged
