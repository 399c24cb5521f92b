"""The standard library stored: the same archive, every member stored, the same bytes each time."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from promptdojo.pyodide.compressed import compress
from promptdojo.pyodide.dist import core_dir
from promptdojo.pyodide.stdlib import STDLIB, store_stdlib, stored_name


def test_the_same_members_in_the_same_order_stored(tmp_path: Path) -> None:
    own = core_dir() / STDLIB
    store_stdlib(own, tmp_path / "one.zip")
    with zipfile.ZipFile(own) as before, zipfile.ZipFile(tmp_path / "one.zip") as after:
        assert after.namelist() == before.namelist()
        assert {m.compress_type for m in before.infolist()} != {zipfile.ZIP_STORED}
        assert {m.compress_type for m in after.infolist()} == {zipfile.ZIP_STORED}
        for old, new in zip(before.infolist(), after.infolist(), strict=True):
            assert (new.date_time, new.external_attr, new.CRC) == (
                old.date_time,
                old.external_attr,
                old.CRC,
            )
        assert after.testzip() is None
    # The same archive gives the same bytes (it names the snapshot made with it), readable
    # by whoever serves or exports it.
    store_stdlib(own, tmp_path / "two.zip")
    assert (tmp_path / "one.zip").read_bytes() == (tmp_path / "two.zip").read_bytes()
    assert stat.S_IMODE((tmp_path / "one.zip").stat().st_mode) == 0o644
    # Whole, it compresses better than Pyodide's archive of members deflated one by one.
    assert len(compress((tmp_path / "one.zip").read_bytes(), "zstd")) < 0.8 * own.stat().st_size


def test_an_archive_that_is_not_one_leaves_nothing_behind(tmp_path: Path) -> None:
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(zipfile.BadZipFile):
        store_stdlib(tmp_path / "bad.zip", tmp_path / "out" / "stored.zip")
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(FileNotFoundError):
        store_stdlib(tmp_path / "missing.zip", tmp_path / "out" / "stored.zip")
    assert list((tmp_path / "out").iterdir()) == []


def test_its_name_carries_its_hash() -> None:
    assert stored_name("ab" * 32) == "python_stdlib-abababababababab.zip"
