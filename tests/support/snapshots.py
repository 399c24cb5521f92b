"""Put a given snapshot where a server or a check will find it: a damaged or a foreign one.

The snapshot cache keeps, per set of inputs, the snapshot, its compressed copies and the SHA-256
recorded when it was made. These helpers write that folder as :mod:`promptdojo.pyodide.snapshot`
does, with the bytes and digest a test chooses.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.cache import sha256_of
from promptdojo.pyodide.snapshot import ensure_snapshot, snapshot_key
from promptdojo.pyodide.stdlib import STDLIB, store_stdlib
from tests.e2e.conftest import SNAPSHOTS


def plant(cache: Path, core: Path, data: bytes, *, digest: str | None = None) -> Path:
    """Make ``data`` the cached snapshot for ``core`` and this checkout's bundle in ``cache``.

    ``digest`` is the SHA-256 to record (default: the true one of ``data``). Only the gzip copy
    is written, so the server sends what was planted. The standard library beside it is the
    real one (stored as a snapshot's is), unless one is there already. Returns the folder.
    """
    folder = cache / snapshot_key(core, build_bundle())
    folder.mkdir(parents=True, exist_ok=True)
    stdlib = folder / STDLIB
    if not stdlib.is_file():
        store_stdlib(core / STDLIB, stdlib)
    (folder / "python_stdlib.sha256").write_text(sha256_of(stdlib))
    (folder / "snapshot.bin").write_bytes(data)
    (folder / "snapshot.bin.gz").write_bytes(gzip.compress(data, compresslevel=1))
    (folder / "snapshot.bin.br").unlink(missing_ok=True)
    (folder / "snapshot.bin.zst").unlink(missing_ok=True)
    (folder / "snapshot.sha256").write_text(digest or hashlib.sha256(data).hexdigest())
    return folder


def damaged(core: Path) -> tuple[bytes, str]:
    """The real snapshot for ``core`` with a few bytes flipped, and the real one's digest."""
    real = ensure_snapshot(core, build_bundle(), SNAPSHOTS)
    data = bytearray(real.path.read_bytes())
    for offset in range(4096, len(data), len(data) // 7):
        data[offset] ^= 0xFF
    return bytes(data), real.sha256
