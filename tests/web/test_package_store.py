"""The server's pull-through package cache, against a fake upstream that is a real HTTP server."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from promptdojo.web.package_store import PackageStore, PackageUnavailableError
from tests.support.upstream import DEP, GOOD, LOCK, Upstream

T = TypeVar("T")
TINYPKG = "tinypkg-1.0-py3-none-any.whl"


def arun(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on a fresh event loop in its own thread.

    The browser tests' Playwright keeps an event loop running in this thread, so the store is
    exercised the way the server runs it: on a loop of its own.
    """
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def store(tmp_path: Path, upstream: str | None, release: Path | None = None) -> PackageStore:
    return PackageStore(LOCK, tmp_path / "cache", upstream, release_dir=release)


def test_a_missing_wheel_is_fetched_once_checked_stored_and_served(
    tmp_path: Path, upstream: Upstream
) -> None:
    packages = store(tmp_path, upstream.url)
    path = arun(packages.get(TINYPKG))
    assert path == tmp_path / "cache" / TINYPKG
    assert path.read_bytes() == GOOD
    assert arun(packages.get(TINYPKG)) == path
    assert upstream.requests == [f"/{TINYPKG}"]


def test_concurrent_first_requests_share_one_download(tmp_path: Path, upstream: Upstream) -> None:
    upstream.delay = 0.3
    packages = store(tmp_path, upstream.url)

    async def many() -> list[Path]:
        return await asyncio.gather(*(packages.get(TINYPKG) for _ in range(8)))

    paths = arun(many())
    assert len(set(paths)) == 1
    assert upstream.requests == [f"/{TINYPKG}"]


@pytest.mark.parametrize("name", ["tampered", "truncated"])
def test_a_wheel_failing_its_hash_is_never_served_or_kept(
    tmp_path: Path, upstream: Upstream, name: str
) -> None:
    packages = store(tmp_path, upstream.url)
    with pytest.raises(PackageUnavailableError, match="does not match the sha256") as info:
        arun(packages.get(f"{name}-1.0-py3-none-any.whl"))
    assert info.value.status == 502
    assert f"`promptdojo pyodide fetch {name}`" in str(info.value)
    assert not (tmp_path / "cache").exists(), "nothing kept, not even the folder it made"


def test_an_unreachable_upstream_fails_fast_and_is_remembered(tmp_path: Path) -> None:
    packages = store(tmp_path, "http://127.0.0.1:9/")
    started = time.monotonic()
    with pytest.raises(PackageUnavailableError) as info:
        arun(packages.get(TINYPKG))
    message = str(info.value)
    assert message.startswith(f"tinypkg ({TINYPKG}) is not in the server's package cache")
    assert "cannot fetch http://127.0.0.1:9/" in message
    assert message.endswith(
        "Pre-fetch it with `promptdojo pyodide fetch tinypkg` and reload the page."
    )
    # The second request gets the remembered answer; nothing was written.
    with pytest.raises(PackageUnavailableError, match="cannot fetch"):
        arun(packages.get(TINYPKG))
    assert time.monotonic() - started < 5
    assert not (tmp_path / "cache" / TINYPKG).exists()


def test_a_corrupted_cached_wheel_is_replaced_from_upstream(
    tmp_path: Path, upstream: Upstream
) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "tinydep-1.0-py3-none-any.whl").write_bytes(b"not the wheel")
    path = arun(store(tmp_path, upstream.url).get("tinydep-1.0-py3-none-any.whl"))
    assert path.read_bytes() == DEP
    assert upstream.requests == ["/tinydep-1.0-py3-none-any.whl"]


def test_without_an_upstream_a_missing_wheel_says_how_to_prefetch(tmp_path: Path) -> None:
    with pytest.raises(PackageUnavailableError) as info:
        arun(store(tmp_path, None).get(TINYPKG))
    assert info.value.status == 404
    assert "fetching is off" in str(info.value)
    assert "`promptdojo pyodide fetch tinypkg`" in str(info.value)


def test_a_release_folder_is_served_first_and_unknown_files_are_404(
    tmp_path: Path, upstream: Upstream
) -> None:
    release = tmp_path / "release"
    release.mkdir()
    (release / TINYPKG).write_bytes(GOOD)
    packages = store(tmp_path, upstream.url, release)
    assert arun(packages.get(TINYPKG)) == release / TINYPKG
    assert upstream.requests == []
    with pytest.raises(PackageUnavailableError, match=r"not a package of Pyodide 0\.0\.0-test"):
        arun(packages.get("other-1.0-py3-none-any.whl"))


def test_wheels_on_hand_are_the_ones_served_without_a_fetch(tmp_path: Path) -> None:
    """Step pages preload these (cached with the lock's hash, or in the release folder) and
    install them in this order: each after what it depends on."""
    packages = store(tmp_path, None)

    def files() -> list[str]:
        return [entry["file_name"] for entry in packages.on_hand(["tinypkg"])]

    assert files() == []
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "tinydep-1.0-py3-none-any.whl").write_bytes(DEP)
    (tmp_path / "cache" / TINYPKG).write_bytes(GOOD[:40])  # damaged: not on hand
    assert files() == ["tinydep-1.0-py3-none-any.whl"]
    (tmp_path / "cache" / TINYPKG).write_bytes(GOOD)
    assert files() == ["tinydep-1.0-py3-none-any.whl", TINYPKG]
    assert packages.on_hand(["tinypkg"])[1]["sha256"] == hashlib.sha256(GOOD).hexdigest()
    assert packages.on_hand(["not-a-package"]) == []


def test_a_cached_wheel_overwritten_in_place_is_hashed_again(tmp_path: Path) -> None:
    packages = store(tmp_path, None)
    (tmp_path / "cache").mkdir()
    wheel = tmp_path / "cache" / TINYPKG
    wheel.write_bytes(GOOD)
    assert arun(packages.get(TINYPKG)) == wheel
    before = wheel.stat()
    with wheel.open("r+b") as file:  # the same size, and the same mtime put back
        file.write(b"X" * 16)
    os.utime(wheel, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (wheel.stat().st_size, wheel.stat().st_mtime_ns) == (
        before.st_size,
        before.st_mtime_ns,
    )
    with pytest.raises(PackageUnavailableError):
        arun(packages.get(TINYPKG))
    assert packages.on_hand(["tinypkg"]) == []


def test_a_cached_wheel_replaced_by_another_file_is_hashed_again(tmp_path: Path) -> None:
    packages = store(tmp_path, None)
    (tmp_path / "cache").mkdir()
    wheel = tmp_path / "cache" / TINYPKG
    wheel.write_bytes(GOOD)
    assert arun(packages.get(TINYPKG)) == wheel
    before = wheel.stat()
    other = tmp_path / "other.whl"
    other.write_bytes(b"X" * len(GOOD))
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    other.replace(wheel)  # another inode, same size and mtime
    with pytest.raises(PackageUnavailableError):
        arun(packages.get(TINYPKG))


def test_a_release_folder_wheel_is_checked_against_the_lock(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.mkdir()
    (release / TINYPKG).write_bytes(GOOD[:-1] + b"!")
    packages = store(tmp_path, None, release)
    with pytest.raises(PackageUnavailableError):
        arun(packages.get(TINYPKG))
    assert packages.on_hand(["tinypkg"]) == []


def test_a_release_folder_wheel_is_never_followed_out_of_its_folder(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.mkdir()
    outside = tmp_path / "elsewhere" / TINYPKG
    outside.parent.mkdir()
    outside.write_bytes(GOOD)  # even with the right bytes
    (release / TINYPKG).symlink_to(outside)
    packages = store(tmp_path, None, release)
    with pytest.raises(PackageUnavailableError):
        arun(packages.get(TINYPKG))
    inside = release / "wheels" / TINYPKG  # a link that stays inside is fine
    inside.parent.mkdir()
    inside.write_bytes(GOOD)
    (release / TINYPKG).unlink()
    (release / TINYPKG).symlink_to(inside)
    assert arun(packages.get(TINYPKG)) == inside
