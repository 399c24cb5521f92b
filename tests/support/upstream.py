"""A fake Pyodide package upstream: a real local HTTP server with real wheels.

It serves two good wheels (``tinypkg`` depends on ``tinydep``), one whose bytes differ from what
the lock names (tampered) and one cut short (truncated), and logs every path requested. The wheels
are complete (dist-info with METADATA, WHEEL, RECORD), so Pyodide in the browser installs them.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import threading
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from promptdojo.pyodide.lock import Lock


def wheel(module: str, version: str = "1.0") -> bytes:
    """A pure-Python wheel holding ``<module>/__init__.py`` with ``NAME = module``."""
    info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": f"NAME = {module!r}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {module}\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: promptdojo-tests\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


GOOD, DEP = wheel("tinypkg"), wheel("tinydep")
FILES = {
    "tinypkg-1.0-py3-none-any.whl": GOOD,
    "tinydep-1.0-py3-none-any.whl": DEP,
    "tampered-1.0-py3-none-any.whl": wheel("evil"),
    "truncated-1.0-py3-none-any.whl": GOOD[:40],
}


def entry(name: str, data: bytes, depends: list[str] | None = None) -> dict:
    """A ``pyodide-lock.json`` entry for a pure-Python wheel whose genuine bytes are ``data``."""
    return {
        "name": name,
        "version": "1.0",
        "file_name": f"{name}-1.0-py3-none-any.whl",
        "install_dir": "site",
        "package_type": "package",
        "imports": [name],
        "sha256": hashlib.sha256(data).hexdigest(),
        "depends": depends or [],
        "unvendored_tests": False,
    }


PACKAGES = {
    "tinypkg": entry("tinypkg", GOOD, ["tinydep"]),
    "tinydep": entry("tinydep", DEP),
    # The lock names the genuine bytes; the server sends other or fewer bytes.
    "tampered": entry("tampered", wheel("tampered")),
    "truncated": entry("truncated", GOOD),
}
LOCK = Lock(version="0.0.0-test", packages=PACKAGES)


@dataclass
class Upstream:
    """The running fake: its base URL, the paths requested, and a delay for each answer."""

    url: str
    requests: list[str] = field(default_factory=list)
    delay: float = 0.0


def serve_upstream() -> tuple[Upstream, http.server.ThreadingHTTPServer]:
    state = Upstream(url="")

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            time.sleep(state.delay)
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

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/"
    return state, server


def running_upstream() -> Iterator[Upstream]:
    """Generator body for a fixture: start the fake, yield it, stop it."""
    state, server = serve_upstream()
    yield state
    server.shutdown()
    server.server_close()
