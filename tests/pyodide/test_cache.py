"""The package cache against a fake upstream that is a real local HTTP server."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdojo.pyodide.cache import fetch, is_cached, missing
from promptdojo.pyodide.lock import PackageError
from tests.support.upstream import GOOD, LOCK, Upstream


def test_fetch_brings_dependencies_and_checks_hashes(tmp_path: Path, upstream: Upstream) -> None:
    assert missing(["tinypkg"], tmp_path, LOCK) == ["tinydep", "tinypkg"]
    fetched = fetch(["tinypkg"], tmp_path, LOCK, upstream.url)
    assert sorted(p.name for p in fetched) == sorted(
        ["tinypkg-1.0-py3-none-any.whl", "tinydep-1.0-py3-none-any.whl"]
    )
    assert (tmp_path / "tinypkg-1.0-py3-none-any.whl").read_bytes() == GOOD
    assert missing(["tinypkg"], tmp_path, LOCK) == []


def test_a_cached_package_is_not_fetched_again(tmp_path: Path, upstream: Upstream) -> None:
    fetch(["tinydep"], tmp_path, LOCK, upstream.url)
    upstream.requests.clear()
    assert fetch(["tinydep"], tmp_path, LOCK, upstream.url) == []
    assert upstream.requests == []


@pytest.mark.parametrize("name", ["tampered", "truncated"])
def test_a_wheel_that_fails_its_hash_is_never_kept(
    tmp_path: Path, upstream: Upstream, name
) -> None:
    with pytest.raises(PackageError, match="does not match the sha256"):
        fetch([name], tmp_path, LOCK, upstream.url)
    assert list(tmp_path.iterdir()) == [], "no partial or bad file is left behind"
    assert not is_cached(LOCK.packages[name], tmp_path)


def test_a_corrupted_cached_wheel_counts_as_missing(tmp_path: Path) -> None:
    (tmp_path / "tinydep-1.0-py3-none-any.whl").write_bytes(b"not the wheel")
    assert missing(["tinydep"], tmp_path, LOCK) == ["tinydep"]


def test_unreachable_upstream_names_the_url(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match=r"cannot fetch http://127\.0\.0\.1:9/tinydep"):
        fetch(["tinydep"], tmp_path, LOCK, "http://127.0.0.1:9/")


def test_a_failed_fetch_leaves_no_empty_cache_folder_behind(tmp_path: Path) -> None:
    cache = tmp_path / ".cache" / "pyodide-packages"
    with pytest.raises(PackageError):
        fetch(["tinydep"], cache, LOCK, "http://127.0.0.1:9/")
    assert list(tmp_path.iterdir()) == [], "neither .cache/ nor its package folder is left"


def test_a_failed_fetch_keeps_a_folder_that_was_already_there(tmp_path: Path) -> None:
    cache = tmp_path / ".cache"
    cache.mkdir()
    with pytest.raises(PackageError):
        fetch(["tinydep"], cache, LOCK, "http://127.0.0.1:9/")
    assert cache.is_dir()


def test_unknown_package_is_named(tmp_path: Path) -> None:
    with pytest.raises(PackageError, match=r"nosuch is not a package of Pyodide 0\.0\.0-test"):
        missing(["nosuch"], tmp_path, LOCK)
