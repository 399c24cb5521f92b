"""Memory snapshots: a booted Pyodide, saved so that a page restores it instead of booting.

A snapshot holds the interpreter after start-up with the learner bundle installed and
``promptdojo.kernel`` imported. A snapshot made with packages (:class:`SnapshotPackages`: numpy's
wheel) holds them installed and imported too: their shared libraries are loaded before the
interpreter starts, where a page loads them again before it restores the snapshot
(``kernel/snapshot-packages.js``); the record of where they went is kept beside it (``.json``).

It is made in Node by ``node/snapshot.mjs`` with the front end's own ``makeSnapshot``
(``kernel/snapshot-make.js``, through ``boot.js``), and is valid only for the exact Pyodide build,
bundle, packages and boot code it was made with. Those inputs name its cache
folder, so a change to any of them makes a new snapshot; the file itself is named by its content
hash and served immutable. Beside it is the standard library it was made with, its members
stored (:mod:`promptdojo.pyodide.stdlib`), which pages that restore it load in place of Pyodide's.

This depends on Pyodide's private snapshot API (``_makeSnapshot``, ``makeMemorySnapshot`` and
``_loadSnapshot``), and on the dlmalloc calls the Emscripten module exports, with which
``makeSnapshot`` zeroes the free heap first (skipped where they are missing). The page falls back to
a cold boot whenever a snapshot fails, and the tests restore one in Chromium and in Node for
every Pyodide version we serve, so an upgrade that breaks the API fails there rather than on a
learner's page.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import subprocess
import tempfile
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import brotli
import zstandard

from promptdojo.pyodide.bundle import LEARNER_MODULES, LearnerBundle
from promptdojo.pyodide.cache import sha256_of
from promptdojo.pyodide.compressed import CODINGS, ZSTD_LEVEL, ZSTD_WINDOW_LOG, compress
from promptdojo.pyodide.node import HERE, boot_module, node
from promptdojo.pyodide.stdlib import FORMAT as STDLIB_FORMAT
from promptdojo.pyodide.stdlib import STDLIB, store_stdlib, stored_name

#: The Node script that makes a snapshot.
MAKER = HERE / "snapshot.mjs"
#: The name of the snapshot file inside its cache folder.
_FILE = "snapshot.bin"
#: Beside a snapshot made with packages: what a page needs to restore them (snapshot-packages.js).
_PACKAGES = "snapshot.bin.json"
#: Its SHA-256, written when it was made: the page checks the bytes it receives against this, so
#: a file damaged on disk or on the way is never restored.
_DIGEST = "snapshot.sha256"
#: The SHA-256 of the standard library it was made with (``STDLIB``, its members stored).
_STDLIB_DIGEST = "python_stdlib.sha256"
#: The compressed copies kept beside a snapshot, best first: (HTTP content coding, file suffix).
#: The maker writes brotli and gzip; zstd is written here (Node 20 has no zstd). A browser that
#: accepts zstd decodes it several times faster than brotli, at a smaller size, and the
#: snapshot's decoding competes with the boot's other work for the CPU.
COPIES = CODINGS
#: How each compressed copy decodes, by file suffix.
_DECODERS = {
    "zst": lambda data: zstandard.ZstdDecompressor().decompress(data),
    "gz": gzip.decompress,
    "br": brotli.decompress,
}
#: What a file that cannot be read, or decoded, raises.
_DECODE_ERRORS = (OSError, ValueError, EOFError, zlib.error, zstandard.ZstdError, brotli.error)


class SnapshotError(RuntimeError):
    """A snapshot could not be made; the message says why and what still works."""


@dataclass(frozen=True)
class SnapshotPackages:
    """Packages a snapshot holds: their wheels (lock entry and checked file, in install order),
    installed in ``folder`` (Pyodide's site-packages), and the modules imported with them."""

    wheels: tuple[tuple[dict, Path], ...]
    folder: str
    imports: tuple[str, ...]

    def key(self) -> dict:
        """What of them the snapshot depends on."""
        wheels = [[entry["file_name"], entry["sha256"]] for entry, _ in self.wheels]
        return {"wheels": wheels, "folder": self.folder, "imports": list(self.imports)}

    def job(self) -> dict:
        """What the Node maker is told of them."""
        wheels = [
            {
                "name": entry["name"],
                "file_name": entry["file_name"],
                "sha256": entry["sha256"],
                "install_dir": entry.get("install_dir", "site"),
                "path": str(path),
            }
            for entry, path in self.wheels
        ]
        return {"wheels": wheels, "folder": self.folder, "imports": list(self.imports)}


def snapshot_packages(core: Path, wheels: list[tuple[dict, Path]]) -> SnapshotPackages:
    """The packages of ``wheels`` (lock entry and file, in install order) for ``core``'s
    snapshot: imported with the learner library's modules (:data:`LEARNER_MODULES`), whose
    imports of them a page would otherwise make after every restore."""
    imports = [name for entry, _ in wheels for name in entry.get("imports") or [entry["name"]]]
    for name in LEARNER_MODULES:
        module = name.removesuffix(".py")
        if module not in ("__init__", "kernel", "kernel_warm_up"):  # imported already
            imports.append(f"promptdojo.{module}")
    return SnapshotPackages(tuple(wheels), site_packages(core), tuple(imports))


def site_packages(core: Path) -> str:
    """Where ``core``'s Pyodide installs packages, from its lock file's Python version; raises
    :class:`SnapshotError` if the lock does not say."""
    try:
        version = json.loads((core / "pyodide-lock.json").read_text())["info"]["python"]
        major, minor = version.split(".")[:2]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SnapshotError(f"no Python version in {core}/pyodide-lock.json: {error}") from error
    return f"/lib/python{major}.{minor}/site-packages"


@dataclass(frozen=True)
class Snapshot:
    """A snapshot on disk, and the standard library it restores against (``stdlib``), each
    with its compressed copies beside it (:data:`COPIES`)."""

    path: Path
    sha256: str
    stdlib: Path
    stdlib_sha256: str
    #: For a snapshot made with packages: the record pages restore them with, else ``None``.
    packages: dict | None = None

    @property
    def filename(self) -> str:
        """Content-hashed name, safe to cache forever."""
        return f"snapshot-{self.sha256[:16]}.bin"

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    @property
    def stdlib_filename(self) -> str:
        """The standard library's content-hashed name, as pages fetch it."""
        return stored_name(self.stdlib_sha256)

    def served(self) -> dict[str, Path]:
        """The files pages fetch, by their content-hashed names: the snapshot and its standard
        library (each with its compressed copies, :meth:`encoded`)."""
        return {self.filename: self.path, self.stdlib_filename: self.stdlib}

    def encoded(self, suffix: str, path: Path | None = None) -> Path:
        """The compressed copy with file suffix ``suffix`` (of :data:`COPIES`: ``zst``...) of
        the snapshot, or of ``path`` (its standard library)."""
        path = path or self.path
        return path.with_name(f"{path.name}.{suffix}")

    def problem(self) -> str:
        """What is wrong with the files on disk, or ``""``: the snapshot and its standard
        library must hash to their recorded digests, and each compressed copy must decode to
        the same bytes."""
        try:
            for path, digest, what in (
                (self.path, self.sha256, "the snapshot"),
                (self.stdlib, self.stdlib_sha256, "its standard library"),
            ):
                if sha256_of(path) != digest:
                    return f"{path} does not match its recorded SHA-256 {digest}"
                for suffix in _DECODERS:
                    copy = self.encoded(suffix, path)
                    if copy.is_file():
                        data = _DECODERS[suffix](copy.read_bytes())
                        if hashlib.sha256(data).hexdigest() != digest:
                            return f"{copy} does not decode to {what}"
        except _DECODE_ERRORS as error:
            return f"{self.path.parent} cannot be read whole: {error}"
        return ""

    def discard(self) -> None:
        """Forget it: without its digest file the cache holds no snapshot, and one is made."""
        self.path.with_name(_DIGEST).unlink(missing_ok=True)

    def describe(self) -> str:
        """One line for a build log: names and sizes."""
        parts = []
        for filename, path in self.served().items():
            part = f"{filename}: {path.stat().st_size / 1e6:.1f} MB"
            for name, suffix in COPIES:
                if self.encoded(suffix, path).is_file():
                    size = self.encoded(suffix, path).stat().st_size
                    part += f", {size / 1e6:.1f} MB with {name}"
                    break
            parts.append(part)
        return "; ".join(parts)


def snapshot_key(
    core: Path, bundle: LearnerBundle, packages: SnapshotPackages | None = None
) -> str:
    """What the snapshot depends on: the Pyodide build, the bundle, the packages it holds, and
    the code that makes it."""
    parts = {
        "pyodide": {
            name: sha256_of(core / name)
            for name in sorted(p.name for p in core.iterdir())
            if name.startswith(("pyodide.", "python_stdlib"))
            and not name.endswith((".br", ".gz", ".map"))
        },
        "bundle": bundle.digest,
        "boot": sha256_of(boot_module()),
        "maker": sha256_of(MAKER),
        "copies": [suffix for _, suffix in COPIES],
        "stdlib": STDLIB_FORMAT,
        # The same level gives other bytes under another libzstd.
        "zstd": [ZSTD_LEVEL, ZSTD_WINDOW_LOG, "checksum", zstandard.ZSTD_VERSION],
    }
    if packages is not None:
        parts["packages"] = packages.key()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


def cached_snapshot(
    core: Path, bundle: LearnerBundle, cache_dir: Path, packages: SnapshotPackages | None = None
) -> Snapshot | None:
    """The snapshot made earlier for these inputs, or ``None``."""
    folder = cache_dir / snapshot_key(core, bundle, packages)
    try:
        digest = (folder / _DIGEST).read_text(encoding="ascii").strip()
        stdlib_digest = (folder / _STDLIB_DIGEST).read_text(encoding="ascii").strip()
        record = json.loads((folder / _PACKAGES).read_text()) if packages else None
    except (OSError, ValueError):
        return None
    found = Snapshot(folder / _FILE, digest, folder / STDLIB, stdlib_digest, record)
    return found if found.path.is_file() and found.stdlib.is_file() else None


def ensure_snapshot(
    core: Path,
    bundle: LearnerBundle,
    cache_dir: Path,
    *,
    packages: SnapshotPackages | None = None,
    timeout: float = 300,
) -> Snapshot:
    """The snapshot for ``core``, ``bundle`` and ``packages``: from ``cache_dir``, or made now
    (a few seconds).

    Raises :class:`SnapshotError` if Node cannot make one. (A server re-hashes the one it finds
    with :func:`checked_snapshot`; a page and the check re-hash what they restore.)
    """
    found = cached_snapshot(core, bundle, cache_dir, packages)
    if found is not None:
        return found
    folder = cache_dir / snapshot_key(core, bundle, packages)
    folder.mkdir(parents=True, exist_ok=True)
    # One maker at a time per snapshot (servers and checks may start together); the others
    # wait, then find it made.
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = cached_snapshot(core, bundle, cache_dir, packages)
        return found if found is not None else _make(core, bundle, folder, timeout, packages)


def checked_snapshot(
    core: Path,
    bundle: LearnerBundle,
    cache_dir: Path,
    warn=lambda message: None,
    packages: SnapshotPackages | None = None,
) -> Snapshot:
    """:func:`ensure_snapshot`, with the files re-hashed: a damaged one is made again (``warn``
    hears why). Raises :class:`SnapshotError` if the new one is damaged too."""
    snapshot = ensure_snapshot(core, bundle, cache_dir, packages=packages)
    problem = snapshot.problem()
    if not problem:
        return snapshot
    warn(f"the cached memory snapshot is damaged ({problem}); making it again")
    snapshot.discard()
    snapshot = ensure_snapshot(core, bundle, cache_dir, packages=packages)
    problem = snapshot.problem()
    if problem:
        raise SnapshotError(f"the memory snapshot made in {cache_dir} is damaged: {problem}")
    return snapshot


def _reason(stderr: str) -> str:
    """The line of the maker's error output that says what failed: the last one that is not a
    JavaScript stack frame (a Python exception's own line comes last in its traceback)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if not line.startswith("at ")]
    return (said or lines or ["(no output)"])[-1]


def _make(
    core: Path,
    bundle: LearnerBundle,
    folder: Path,
    timeout: float,
    packages: SnapshotPackages | None = None,
) -> Snapshot:
    """Run the Node maker into ``folder``, with the standard library stored there first; the
    snapshot's digest file, written last, marks it complete."""
    stdlib = folder / STDLIB
    try:
        store_stdlib(core / STDLIB, stdlib)
    except (OSError, zipfile.BadZipFile) as error:
        raise SnapshotError(f"no snapshot for {core}: its {STDLIB}: {error}") from error
    with (
        tempfile.TemporaryDirectory(prefix="promptdojo-snapshot-") as tmp,
        ThreadPoolExecutor() as pool,
    ):
        # The standard library's copies are compressed while Node makes the snapshot.
        stdlib_copies = [pool.submit(_write_copy, stdlib, coding) for coding, _ in COPIES]
        bundle_file = Path(tmp) / "bundle.zip"
        bundle_file.write_bytes(bundle.data)
        job = {
            "boot": str(boot_module()),
            "pyodide": str(core),
            "stdlib": str(stdlib),
            "bundle": str(bundle_file),
            "out": str(folder / _FILE),
            "packages": packages.job() if packages is not None else None,
        }
        job_file = Path(tmp) / "job.json"
        job_file.write_text(json.dumps(job))
        try:
            done = subprocess.run(
                [node(), str(MAKER), str(job_file)],
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
            raise SnapshotError(f"no snapshot for {core}: {error}") from error
        for made in stdlib_copies:
            made.result()
    if done.returncode != 0:
        raise SnapshotError(f"no snapshot for {core}: {_reason(done.stderr)}")
    _write_copy(folder / _FILE, "zstd")
    try:
        record = json.loads((folder / _PACKAGES).read_text()) if packages is not None else None
    except (OSError, ValueError) as error:
        raise SnapshotError(f"no snapshot with packages for {core}: {error}") from error
    stdlib_digest = _write_digest(stdlib, folder / _STDLIB_DIGEST)
    digest = _write_digest(folder / _FILE, folder / _DIGEST)
    return Snapshot(folder / _FILE, digest, stdlib, stdlib_digest, record)


def _write_digest(path: Path, to: Path) -> str:
    """Write the SHA-256 of ``path`` into ``to`` (whole or not at all), and return it."""
    digest = sha256_of(path)
    to.with_suffix(".tmp").write_text(digest + "\n", encoding="ascii")
    to.with_suffix(".tmp").replace(to)
    return digest


def _write_copy(path: Path, coding: str) -> None:
    """Write the copy of ``path`` in ``coding`` beside it (deterministic: one thread per copy,
    fixed levels)."""
    suffix = dict(COPIES)[coding]
    data = compress(path.read_bytes(), coding)
    partial = path.with_name(f"{path.name}.{suffix}.tmp")
    partial.write_bytes(data)
    partial.replace(path.with_name(f"{path.name}.{suffix}"))
