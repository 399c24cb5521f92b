"""No file outside the served folders is reachable, whatever the URL looks like.

Requests go over a raw socket to a real uvicorn, so no client library normalizes the path first.
"""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptdojo.pyodide.dist import build_dir
from tests.e2e.conftest import Server, start_server, stop_server

ROUTES = [
    "/assets/",
    "/assets/pyodide/314.0.7/",
    "/pyodide/314.0.7/",
    "/bundle/",
    "/packages/",
    "/lessons/hello/",
]
PAYLOADS = [
    "../pyproject.toml",
    "../../pyproject.toml",
    "../../../../../../etc/passwd",
    "%2e%2e/%2e%2e/pyproject.toml",
    "..%2f..%2fpyproject.toml",
    "%252e%252e%252f%252e%252e%252fpyproject.toml",
    "..%5c..%5cpyproject.toml",
    "..\\..\\pyproject.toml",
    "%2fetc%2fpasswd",
    "/etc/passwd",
    "//etc/passwd",
    "manifest.json%00.js",
    "x%00",
    "....//....//pyproject.toml",
]
SECRETS = (b"[project]", b"root:x:")


@pytest.fixture(scope="module")
def raw_server(fixture_lessons: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real server with every file route, including an unpacked release (--pyodide-dir)."""
    tmp = tmp_path_factory.mktemp("raw")
    release = tmp / "release" / "pyodide"
    shutil.copytree(next((build_dir() / "pyodide").iterdir()), release)
    server = start_server(
        fixture_lessons, tmp, "--log-level", "warning", "--pyodide-dir", str(release)
    )
    yield server
    stop_server(server)


def raw_get(server: Server, target: str) -> tuple[int, bytes]:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("payload", PAYLOADS)
def test_traversal_is_refused(raw_server: Server, route: str, payload: str) -> None:
    status, data = raw_get(raw_server, route + payload)
    assert status in (400, 404), f"{route}{payload} answered {status}"
    assert not any(secret in data for secret in SECRETS)


@pytest.mark.parametrize("route", ["/assets/pyodide/314.0.7/", "/pyodide/314.0.7/"])
def test_the_raw_client_does_reach_real_files(raw_server: Server, route: str) -> None:
    status, data = raw_get(raw_server, route + "pyodide-lock.json")
    assert status == 200
    assert b'"packages"' in data
