"""Two real static hosts for an export: ``python -m http.server`` (no headers at all) and a tiny
header-setting one built on ``http.server`` that applies the export's ``_headers`` file, as
Netlify and Cloudflare Pages do.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from promptdojo.web.static_host import matches, parse_headers_file


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(url: str, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the static server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within 30 s")


#: A request line and its status, in http.server's and in uvicorn's logs.
REQUEST = re.compile(r'"GET (?P<path>[^ ?"]+)[^"]*" (?P<status>\d{3})')


def requested(log: Path, status: str | None = None) -> Counter[str]:
    """How often each path was asked for in a server's request log (only answers of ``status``,
    when given). The server sees every request, whichever worker of the page made it."""
    return Counter(
        m["path"]
        for m in REQUEST.finditer(log.read_text(errors="replace"))
        if status is None or m["status"] == status
    )


def paths_in_order(log: Path) -> list[str]:
    """The paths of a server's request log, in the order it answered them."""
    return [m["path"] for m in REQUEST.finditer(log.read_text(errors="replace"))]


@contextmanager
def plain_server(root: Path, log: Path | None = None) -> Iterator[str]:
    """``python -m http.server`` serving ``root``: the base URL, e.g. ``http://127.0.0.1:PORT``.

    ``log`` gets its request log (one line per request, with the status).
    """
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb") if log is not None else subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url + "/", process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


class HeadersHandler(SimpleHTTPRequestHandler):
    """Serves files, plus every header of each ``_headers`` rule whose path matches."""

    headers_file: Path

    def log_message(self, format: str, *args: object) -> None:  # quiet, as in a test
        pass

    def _rule_headers(self) -> list[tuple[str, str]]:
        path = self.path.split("?", 1)[0]
        rules = parse_headers_file(self.headers_file.read_text(encoding="utf-8"))
        return [
            header for pattern, headers in rules if matches(pattern, path) for header in headers
        ]

    def send_header(self, keyword: str, value: str) -> None:
        ours = {name.lower() for name, _ in self._rule_headers()}
        if keyword.lower() not in ours:
            super().send_header(keyword, value)

    def end_headers(self) -> None:
        for name, value in self._rule_headers():
            super().send_header(name, value)
        super().end_headers()


@contextmanager
def headers_server(root: Path, headers_file: Path) -> Iterator[str]:
    """A static server of ``root`` that applies ``headers_file``; yields its base URL."""
    handler = type("Handler", (HeadersHandler,), {"headers_file": headers_file})
    with _threaded(handler, root) as url:
        yield url


@contextmanager
def _threaded(handler: type, root: Path) -> Iterator[str]:
    """``handler`` serving ``root`` from a thread on a free loopback port; yields its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        _wait(url + "/")
        yield url
    finally:
        httpd.shutdown()
        httpd.server_close()


class Hold:
    """One URL path whose requests a :func:`holding_server` leaves unanswered until released.

    ``then_serve``, when set, is the folder the server serves from the moment the held request
    arrives: a new version published while that request is in flight, never before it.
    """

    def __init__(self, root: Path) -> None:
        self.path: str | None = None
        self.root = root
        self.then_serve: Path | None = None
        self.arrived = threading.Event()
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def wait(self, path: str) -> None:
        if path == self.path:
            if self.then_serve is not None:
                self.root = self.then_serve
            self.arrived.set()
            self._released.wait(120)


class HoldingHandler(SimpleHTTPRequestHandler):
    """Serves files like ``http.server``; a request for the held path waits to be released."""

    hold: Hold

    def log_message(self, format: str, *args: object) -> None:  # quiet, as in a test
        pass

    def do_GET(self) -> None:
        self.hold.wait(self.path.split("?", 1)[0])
        self.directory = str(self.hold.root)
        super().do_GET()


@contextmanager
def holding_server(root: Path) -> Iterator[tuple[str, Hold]]:
    """A header-less static server of ``root`` (as ``http.server``) that can hold one path's
    requests; yields its base URL and the :class:`Hold`."""
    hold = Hold(root)
    handler = type("Handler", (HoldingHandler,), {"hold": hold})
    with _threaded(handler, root) as url:
        try:
            yield url, hold
        finally:
            hold.release()  # before the server shuts down: a held request must not block it
