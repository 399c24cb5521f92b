"""Compressed copies of the files a boot downloads, made once per content and kept on disk.

A first visit is bound by the bytes it downloads: Pyodide's WebAssembly is 8.6 MB raw and 2.3 MB
in zstd. The server sends these copies by ``Accept-Encoding`` (``serve --pyodide-dir`` as the
built-in core), and the static export puts one beside each big file, which the page decodes
itself, since most static hosts send ``application/octet-stream`` and ``application/wasm`` as
they are. Copies are named by the SHA-256 of what they compress, so a changed file gets new ones
and an unchanged one is never compressed twice. The same bytes always give the same copies.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import tempfile
from pathlib import Path

import brotli
import zstandard

#: HTTP content codings and their file suffixes, best first: a browser that takes zstd decodes
#: it fastest, at the smallest size but for brotli's slowest levels.
CODINGS: tuple[tuple[str, str], ...] = (("zstd", "zst"), ("br", "br"), ("gzip", "gz"))
#: zstd's level, and its window: at most 8 MiB, the most browsers decode (RFC 9659).
ZSTD_LEVEL = 19
ZSTD_WINDOW_LOG = 23
#: brotli's quality: 11 is several times smaller than 9 on text, but takes a minute on the wasm.
BROTLI_QUALITY_SMALL = 11
BROTLI_QUALITY_LARGE = 9
BROTLI_LARGE = 4_000_000
#: What is worth compressing: text and WebAssembly. Zips and wheels are compressed already.
COMPRESSIBLE = (".wasm", ".js", ".mjs", ".json", ".css", ".map")
#: A copy is kept only when it saves at least this fraction of the bytes.
WORTH = 0.9


def compressible(name: str) -> bool:
    """True for a file name whose content compresses (text, WebAssembly)."""
    return name.endswith(COMPRESSIBLE)


def compress(data: bytes, coding: str) -> bytes:
    """``data`` in the content coding ``coding`` (one of :data:`CODINGS`), deterministically.

    zstd frames carry their checksum, so a page that decodes a damaged copy finds out.
    """
    if coding == "zstd":
        params = zstandard.ZstdCompressionParameters.from_level(
            ZSTD_LEVEL, window_log=ZSTD_WINDOW_LOG, write_checksum=True
        )
        return zstandard.ZstdCompressor(compression_params=params).compress(data)
    if coding == "br":
        large = len(data) > BROTLI_LARGE
        quality = BROTLI_QUALITY_LARGE if large else BROTLI_QUALITY_SMALL
        return brotli.compress(data, quality=quality)
    if coding == "gzip":
        return gzip.compress(data, compresslevel=9, mtime=0)
    raise ValueError(f"unknown content coding {coding!r}; known: {[c for c, _ in CODINGS]}")


def copies(path: Path, cache_dir: Path) -> dict[str, Path]:
    """The compressed copies of ``path`` worth having, by content coding, made if missing.

    A coding whose copy would save less than a tenth of the bytes has none. Safe against other
    processes making the same copies at once (a lock per content, files moved into place).
    """
    data = path.read_bytes()
    folder = cache_dir / hashlib.sha256(data).hexdigest()[:32]
    folder.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for coding, suffix in CODINGS:
            copy, skipped = folder / f"data.{suffix}", folder / f"data.{suffix}.skipped"
            if not copy.is_file() and not skipped.is_file():
                encoded = compress(data, coding)
                if len(encoded) > WORTH * len(data):
                    skipped.touch()
                    continue
                with tempfile.NamedTemporaryFile(dir=folder, delete=False) as partial:
                    partial.write(encoded)
                Path(partial.name).replace(copy)
            if copy.is_file():
                found[coding] = copy
    return found


def folder_copies(folder: Path, names: list[str], cache_dir: Path) -> dict[str, dict[str, Path]]:
    """:func:`copies` of each compressible file ``names`` of ``folder``, by name."""
    return {
        name: copies(folder / name, cache_dir)
        for name in names
        if compressible(name) and (folder / name).is_file()
    }
