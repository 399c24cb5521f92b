"""Compressed copies of the boot's files: made once per content, deterministic, decodable."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import brotli
import pytest
import zstandard

from promptdojo.pyodide.compressed import CODINGS, compressible, copies, folder_copies

TEXT = b"".join(b"def f%d(x):\n    return x * %d\n" % (i, i) for i in range(4000))
DECODE = {
    "zstd": lambda data: zstandard.ZstdDecompressor().decompress(data),
    "br": brotli.decompress,
    "gzip": gzip.decompress,
}


def test_every_coding_decodes_to_the_file(tmp_path: Path) -> None:
    source = tmp_path / "loader.js"
    source.write_bytes(TEXT)
    made = copies(source, tmp_path / "cache")
    assert set(made) == {coding for coding, _ in CODINGS}
    for coding, path in made.items():
        assert DECODE[coding](path.read_bytes()) == TEXT, coding
        assert path.stat().st_size < len(TEXT) // 4


def test_copies_are_made_once_per_content_and_the_same_bytes_every_time(tmp_path: Path) -> None:
    first, second = tmp_path / "a.wasm", tmp_path / "b.wasm"
    first.write_bytes(TEXT)
    second.write_bytes(TEXT)
    made = copies(first, tmp_path / "cache")
    stamps = {coding: path.stat().st_mtime_ns for coding, path in made.items()}
    os.utime(made["zstd"], ns=(1, 1))
    again = copies(second, tmp_path / "cache")  # same content, another name: the same copies
    assert again == made
    assert again["zstd"].stat().st_mtime_ns == 1  # not made again
    assert {c: p.stat().st_mtime_ns for c, p in again.items() if c != "zstd"} == {
        c: s for c, s in stamps.items() if c != "zstd"
    }
    other = copies(first, tmp_path / "other-cache")
    assert {c: p.read_bytes() for c, p in other.items()} == {
        c: p.read_bytes() for c, p in made.items()
    }


def test_a_file_that_does_not_compress_gets_no_copy(tmp_path: Path) -> None:
    noise = tmp_path / "noise.wasm"
    noise.write_bytes(os.urandom(200_000))
    assert copies(noise, tmp_path / "cache") == {}
    assert copies(noise, tmp_path / "cache") == {}  # remembered, not tried again


def test_a_damaged_zstd_copy_fails_its_checksum(tmp_path: Path) -> None:
    source = tmp_path / "x.json"
    source.write_bytes(TEXT)
    data = bytearray(copies(source, tmp_path / "cache")["zstd"].read_bytes())
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(zstandard.ZstdError):
        zstandard.ZstdDecompressor().decompress(bytes(data))


def test_only_text_and_webassembly_are_compressed(tmp_path: Path) -> None:
    assert compressible("pyodide.asm.wasm")
    assert compressible("pyodide.mjs")
    assert not compressible("python_stdlib.zip")
    assert not compressible("numpy-2.whl")
    for name in ("a.js", "b.zip"):
        (tmp_path / name).write_bytes(TEXT)
    assert set(folder_copies(tmp_path, ["a.js", "b.zip", "missing.js"], tmp_path / "c")) == {"a.js"}
