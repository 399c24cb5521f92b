"""The server's side of ``/packages/<wheel>``: a pull-through cache of Pyodide packages.

A wheel is served from, in order: the unpacked Pyodide release given with ``--pyodide-dir``; the
package cache folder; the upstream (by default the official CDN of the pinned Pyodide), fetched
once, checked against the sha256 in ``pyodide-lock.json`` and stored in the cache. Concurrent first
requests for one wheel share one download. A failed fetch is remembered for a short while, so a
classroom without internet gets its answer at once instead of one timeout per page load.

Every wheel served, from the release folder or the cache, is a regular file inside its folder
(a symlink that leads out of it is refused) whose sha256 is the lock's. It is hashed when first
served after start, and again whenever its file changes: its device, inode, size, modification
or change time (a file overwritten in place, with its size and mtime put back, still gets a new
change time).
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat as stat_module
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from promptdojo.pyodide.cache import download, sha256_of
from promptdojo.pyodide.lock import Lock, PackageError

log = logging.getLogger("promptdojo.web")

#: Seconds a failed upstream fetch is remembered before the next request tries again.
FAILURE_TTL = 30.0
#: Seconds to wait for the upstream to answer (connect, and each read).
FETCH_TIMEOUT = 10.0


def _prefetch_hint(name: str) -> str:
    return f"Pre-fetch it with `promptdojo pyodide fetch {name}` and reload the page."


class PackageUnavailableError(Exception):
    """A wheel cannot be served; ``status`` is the HTTP status, the message says what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class PackageStore:
    """Where wheels come from, for one running server."""

    lock: Lock
    cache_dir: Path | None
    upstream: str | None = None
    release_dir: Path | None = None
    _by_file: dict[str, dict] = field(default_factory=dict, init=False)
    _verified: dict[Path, tuple[int, ...]] = field(default_factory=dict, init=False)
    _inflight: dict[str, asyncio.Task[Path]] = field(default_factory=dict, init=False)
    _failures: dict[str, tuple[float, str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._by_file = {entry["file_name"]: entry for entry in self.lock.packages.values()}

    def _checked(self, folder: Path | None, entry: dict) -> Path | None:
        """The wheel of ``entry`` in ``folder``, resolved, if it is a regular file inside the
        folder with the lock's sha256 (hashed again whenever its file changed)."""
        if folder is None:
            return None
        try:
            path = (folder / entry["file_name"]).resolve(strict=True)
            inside = path.is_relative_to(folder.resolve(strict=True))
            stat = path.stat()
        except OSError:
            return None
        if not inside:
            log.warning("%s leads out of %s; not serving it", folder / entry["file_name"], folder)
            return None
        if not stat_module.S_ISREG(stat.st_mode):
            return None
        if self._verified.get(path) == _signature(stat):
            return path
        self._verified.pop(path, None)
        if sha256_of(path) != entry["sha256"]:
            log.warning("%s does not match pyodide-lock.json; not serving it", path)
            return None
        self._verified[path] = _signature(stat)
        return path

    def _cached(self, entry: dict) -> Path | None:
        """The cached wheel if it is there with the lock's sha256."""
        return self._checked(self.cache_dir, entry)

    def _on_hand(self, entry: dict) -> Path | None:
        """The wheel from the release folder, else from the cache, if either holds it whole."""
        return self._checked(self.release_dir, entry) or self._cached(entry)

    def on_hand(self, names: Iterable[str]) -> list[dict]:
        """Lock entries of ``names`` and their dependencies whose wheels are served without a
        fetch, each after what it depends on.

        Step pages name these, and their worker unpacks them while Python starts (wheels.js).
        """
        try:
            wanted = self.lock.install_order(names)
        except PackageError:
            return []
        return [entry for entry in wanted if self._on_hand(entry) is not None]

    def on_hand_paths(self, names: Iterable[str]) -> list[tuple[dict, Path]]:
        """:meth:`on_hand`'s entries, each with the path of its checked wheel."""
        found = [(entry, self._on_hand(entry)) for entry in self.on_hand(names)]
        return [(entry, path) for entry, path in found if path is not None]

    async def get(self, file_name: str) -> Path:
        """The path of ``file_name`` to serve, fetching it first if need be."""
        entry = self._by_file.get(file_name)
        if entry is None:
            raise PackageUnavailableError(
                404, f"{file_name} is not a package of Pyodide {self.lock.version}"
            )
        name = entry["name"]
        path = await asyncio.to_thread(self._on_hand, entry)
        if path is not None:
            return path
        if self.upstream is None or self.cache_dir is None:
            raise PackageUnavailableError(
                404,
                f"{name} ({file_name}) is not in the server's package cache {self.cache_dir} "
                f"and fetching is off. {_prefetch_hint(name)}",
            )
        failed = self._failures.get(file_name)
        if failed is not None and time.monotonic() - failed[0] < FAILURE_TTL:
            raise PackageUnavailableError(502, failed[1])
        task = self._inflight.get(file_name)
        if task is None:
            task = asyncio.create_task(self._download(entry))
            self._inflight[file_name] = task
            task.add_done_callback(lambda _: self._inflight.pop(file_name, None))
        # shield: a client that hangs up must not cancel the download others wait for.
        return await asyncio.shield(task)

    async def _download(self, entry: dict) -> Path:
        name, file_name = entry["name"], entry["file_name"]
        log.info("fetching %s from %s", file_name, self.upstream)
        try:
            path = await asyncio.to_thread(
                download, entry, self.cache_dir, self.upstream, FETCH_TIMEOUT
            )
        except PackageError as exc:
            message = (
                f"{name} ({file_name}) is not in the server's package cache and could not be "
                f"fetched: {exc}. {_prefetch_hint(name)}"
            )
            log.warning("%s", message)
            self._failures[file_name] = (time.monotonic(), message)
            raise PackageUnavailableError(502, message) from None
        self._failures.pop(file_name, None)
        path = path.resolve()
        self._verified[path] = _signature(path.stat())
        return path


def _signature(stat: os.stat_result) -> tuple[int, ...]:
    """What changes whenever a file's bytes may have: any write updates its change time."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
