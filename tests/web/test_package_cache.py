"""The package cache against a fake upstream that is a real local HTTP server."""

from __future__ import annotations

import hashlib
import http.server
import io
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdojo.web.package_cache import Lock, PackageError, fetch, is_cached, missing


def wheel(module: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{module}.py", f"NAME = {module!r}\n")
    return buffer.getvalue()


GOOD, DEP = wheel("tinypkg"), wheel("tinydep")
FILES = {
    "tinypkg-1.0-py3-none-any.whl": GOOD,
    "tinydep-1.0-py3-none-any.whl": DEP,
    "tampered-1.0-py3-none-any.whl": wheel("evil"),
    "truncated-1.0-py3-none-any.whl": GOOD[:40],
}


def entry(name: str, file_name: str, data: bytes, depends: list[str] | None = None) -> dict:
    return {
        "name": name,
        "file_name": file_name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "depends": depends or [],
    }


LOCK = Lock(
    version="0.0.0-test",
    packages={
        "tinypkg": entry("tinypkg", "tinypkg-1.0-py3-none-any.whl", GOOD, ["tinydep"]),
        "tinydep": entry("tinydep", "tinydep-1.0-py3-none-any.whl", DEP),
        # The lock names the genuine bytes; the server sends other or fewer bytes.
        "tampered": entry("tampered", "tampered-1.0-py3-none-any.whl", wheel("tampered")),
        "truncated": entry("truncated", "truncated-1.0-py3-none-any.whl", GOOD),
    },
)


class Upstream(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []  # noqa: RUF012 - shared log of paths requested

    def do_GET(self) -> None:
        Upstream.requests.append(self.path)
        data = FILES.get(self.path.lstrip("/"))
        if data is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Upstream.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_fetch_brings_dependencies_and_checks_hashes(tmp_path: Path, upstream: str) -> None:
    assert missing(["tinypkg"], tmp_path, LOCK) == ["tinydep", "tinypkg"]
    fetched = fetch(["tinypkg"], tmp_path, LOCK, upstream)
    assert sorted(p.name for p in fetched) == sorted(
        ["tinypkg-1.0-py3-none-any.whl", "tinydep-1.0-py3-none-any.whl"]
    )
    assert (tmp_path / "tinypkg-1.0-py3-none-any.whl").read_bytes() == GOOD
    assert missing(["tinypkg"], tmp_path, LOCK) == []


def test_a_cached_package_is_not_fetched_again(tmp_path: Path, upstream: str) -> None:
    fetch(["tinydep"], tmp_path, LOCK, upstream)
    Upstream.requests.clear()
    assert fetch(["tinydep"], tmp_path, LOCK, upstream) == []
    assert Upstream.requests == []


@pytest.mark.parametrize("name", ["tampered", "truncated"])
def test_a_wheel_that_fails_its_hash_is_never_kept(tmp_path: Path, upstream: str, name) -> None:
    with pytest.raises(PackageError, match="does not match the sha256"):
        fetch([name], tmp_path, LOCK, upstream)
    assert list(tmp_path.iterdir()) == [], "no partial or bad file is left behind"
    assert not is_cached(LOCK.packages[name], tmp_path)


def test_a_corrupted_cached_wheel_counts_as_missing(tmp_path: Path) -> None:
    (tmp_path / "tinydep-1.0-py3-none-any.whl").write_bytes(b"not the wheel")
    assert missing(["tinydep"], tmp_path, LOCK) == ["tinydep"]


def test_unreachable_upstream_names_the_url(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match=r"cannot fetch http://127\.0\.0\.1:9/tinydep"):
        fetch(["tinydep"], tmp_path, LOCK, "http://127.0.0.1:9/")


def test_unknown_package_is_named(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match=r"nosuch is not a package of Pyodide 0\.0\.0-test"):
        missing(["nosuch"], tmp_path, LOCK)
