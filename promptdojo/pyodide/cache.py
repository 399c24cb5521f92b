"""The cache of Pyodide packages: wheels named and hashed in ``pyodide-lock.json``.

A wheel enters the cache only after its sha256 matches the lock file; a mismatched or truncated
download is discarded, never kept and never served. Writes go to a temporary file that is renamed
into place, so a reader never sees half a wheel.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

from promptdojo.pyodide.lock import Lock, PackageError

#: Where the official builds of a Pyodide release live; ``{version}`` is the pinned version.
DEFAULT_UPSTREAM = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_cached(entry: dict, cache_dir: Path) -> bool:
    """True when the entry's wheel is in ``cache_dir`` with the right sha256."""
    path = cache_dir / entry["file_name"]
    return path.is_file() and sha256_of(path) == entry["sha256"]


def missing(names: Iterable[str], cache_dir: Path, lock: Lock) -> list[str]:
    """Packages (with dependencies) not in the cache, or there with the wrong hash."""
    return [n for n in lock.with_dependencies(names) if not is_cached(lock.packages[n], cache_dir)]


def download(entry: dict, cache_dir: Path, upstream: str, timeout: float = 60) -> Path:
    """Fetch one wheel from ``upstream``, check its sha256, and store it in ``cache_dir``."""
    url = upstream.rstrip("/") + "/" + entry["file_name"]
    # Folders made here are removed again if nothing lands in them (a failed first fetch).
    created = [p for p in (cache_dir, *cache_dir.parents) if not p.exists()]
    cache_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _download(entry, cache_dir, url, timeout)
    except PackageError:
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _download(entry: dict, cache_dir: Path, url: str, timeout: float) -> Path:
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=cache_dir, prefix=".partial-", suffix=".whl")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            for chunk in iter(lambda: response.read(1 << 20), b""):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != entry["sha256"]:
            raise PackageError(
                f"{entry['file_name']} from {url} does not match the sha256 in pyodide-lock.json "
                "(tampered or truncated); it was discarded"
            )
        final = cache_dir / entry["file_name"]
        os.replace(tmp, final)
        return final
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise PackageError(f"cannot fetch {url}: {getattr(exc, 'reason', exc)}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def fetch(names: Iterable[str], cache_dir: Path, lock: Lock, upstream: str) -> list[Path]:
    """Make sure ``names`` and their dependencies are cached; return the wheels fetched now."""
    fetched = []
    for name in lock.with_dependencies(names):
        entry = lock.packages[name]
        if not is_cached(entry, cache_dir):
            fetched.append(download(entry, cache_dir, upstream))
    return fetched


def not_cached_message(names: Iterable[str], cache_dir: Path) -> str:
    """One line for packages that are not in the cache, with the command that fixes it."""
    names = list(names)
    verb = "is" if len(names) == 1 else "are"
    return (
        f"not run: {', '.join(names)} {verb} not cached in {cache_dir}. "
        f"Run `promptdojo pyodide fetch {' '.join(names)}`."
    )
