"""Compiled wheels: a package's wheel with the bytecode of the modules a lesson loads from it;
and the compiled learner bundle, the bundle with the bytecode of all its modules.

A memory snapshot cannot hold a package with native code, so numpy is imported after the
restore, and about half of that import is compiling numpy's ``.py`` files to bytecode in
WebAssembly. A compiled wheel spares the page that work: the wheel's own files, unchanged, plus a
``__pycache__`` pyc for every module the package's imports and the kernel's warm-up load, made
by this Pyodide release itself in Node (``node/bytecode.mjs``), so their magic number is the
one the page's Python expects. The pycs are unchecked-hash ones: Python uses them whatever the
files' times, without reading the source, and the sources stay for tracebacks.

The archive is stored uncompressed (a zip whose members are not deflated) and sent compressed
as a whole, zstd first (``promptdojo serve`` by ``Accept-Encoding``, the export as a twin): the
wheel's deflated members are larger than the whole archive in zstd, pycs included. Pages check
it against its SHA-256 and install it as they install the wheel (``static/js/kernel/wheels.js``); a
compiled wheel that cannot be had or used leaves the page to the wheel itself, which only costs
time. Like a snapshot, it is valid for the exact Pyodide build, wheels and warm-up it was made
with: those name its cache folder.

The learner bundle's modules are compiled the same way (:func:`compiled_bundle`): a page
imports the library modules a step's cells use before "ready" (``decoding``, ``display``,
``quantization``...), and the page's Python writes no bytecode, so every visit compiled their
sources again. The compiled bundle holds the same members, then a pyc beside each module; pages
unpack it as they unpack the bundle.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import os
import subprocess
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from promptdojo.pyodide.bundle import LearnerBundle, bundle_from
from promptdojo.pyodide.cache import sha256_of
from promptdojo.pyodide.node import HERE, node

#: The Node script that compiles the modules.
MAKER = HERE / "bytecode.mjs"
#: The compiled wheels' folder inside the snapshot cache (they depend on the build as it does).
SUBFOLDER = "compiled-wheels"
#: The compiled learner bundles' folder inside the snapshot cache.
BUNDLE_SUBFOLDER = "compiled-bundles"
#: Written last in a compiled folder: each wheel's file name and its compiled archive's SHA-256.
_DIGESTS = "compiled.json"
#: The date every member of an archive carries, so the same inputs give the same bytes.
_DATE = (1980, 1, 1, 0, 0, 0)
#: Bumped when the archive's layout changes.
_FORMAT = 1


class CompiledWheelError(RuntimeError):
    """Compiled wheels could not be made; pages install the wheels themselves."""


@dataclass(frozen=True)
class CompiledWheel:
    """A wheel's compiled archive on disk: ``wheel`` names the wheel it was made from."""

    wheel: str
    path: Path
    sha256: str
    modules: int

    @property
    def filename(self) -> str:
        """Content-hashed name, safe to cache forever."""
        return f"{self.wheel.removesuffix('.whl')}-{self.sha256[:16]}.zip"


def warm_up_script(imports: Sequence[str], exercise: str) -> str:
    """The code whose loaded modules are compiled: each import, then ``exercise`` (the kernel's
    warm-up); whatever fails is skipped (its modules then load from source, as before)."""
    lines = [f"try:\n    import {name}\nexcept Exception:\n    pass" for name in imports]
    lines.append(f"try:\n    exec({exercise!r}, {{}})\nexcept Exception:\n    pass")
    return "\n".join(lines) + "\n"


def _core_digests(core: Path) -> dict[str, str]:
    """The Pyodide build, by the SHA-256 of its interpreter's files: hashed once a process for
    the files as they are (a server's start asks for the compiled wheels and the compiled
    bundle, each keyed by it)."""
    files = tuple(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(core.iterdir())
        if p.name.startswith(("pyodide.", "python_stdlib"))
        and not p.name.endswith((".br", ".gz", ".zst", ".map"))
    )
    return dict(_hashed(core, files))


@functools.cache
def _hashed(core: Path, files: tuple[tuple[str, int, int], ...]) -> tuple[tuple[str, str], ...]:
    """``(name, SHA-256)`` of each of ``files`` in ``core``, named with their size and time so
    that a changed file is hashed again."""
    return tuple((name, sha256_of(core / name)) for name, _, _ in files)


def _key(parts: dict) -> str:
    """A cache folder's name for what it depends on."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


def compiled_key(core: Path, wheels: Sequence[tuple[dict, Path]], script: str) -> str:
    """What compiled wheels depend on: the Pyodide build, the wheels, what is run, the maker."""
    parts = {
        "pyodide": _core_digests(core),
        "wheels": [entry["sha256"] for entry, _ in wheels],
        "script": script,
        "maker": sha256_of(MAKER),
        "format": _FORMAT,
    }
    return _key(parts)


def _cached(folder: Path) -> dict[str, CompiledWheel] | None:
    """The compiled wheels made earlier in ``folder``, re-hashed; ``None`` if any is missing."""
    try:
        digests = json.loads((folder / _DIGESTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = {}
    for wheel, (sha256, modules) in digests.items():
        path = folder / f"{wheel.removesuffix('.whl')}.zip"
        if not path.is_file() or sha256_of(path) != sha256:
            return None
        found[wheel] = CompiledWheel(wheel, path, sha256, modules)
    return found


def ensure_compiled(
    core: Path,
    wheels: Sequence[tuple[dict, Path]],
    cache_dir: Path,
    exercise: str = "",
    *,
    timeout: float = 300,
) -> dict[str, CompiledWheel]:
    """The compiled wheels of ``wheels`` (lock entries, each with its checked wheel's path, in
    install order), by wheel file name: from ``cache_dir``, or made now (a few seconds).

    ``exercise`` runs after the packages' imports (the kernel's warm-up). A wheel none of whose
    modules were loaded gets none. Raises :class:`CompiledWheelError` if Node cannot make them.
    """
    if not wheels:
        return {}
    imports = [name for entry, _ in wheels for name in entry.get("imports", ())]
    script = warm_up_script(imports, exercise)
    folder = cache_dir / SUBFOLDER / compiled_key(core, wheels, script)
    folder.mkdir(parents=True, exist_ok=True)
    # One maker at a time per folder (servers and exports may start together).
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _cached(folder)
        return found if found is not None else _make(core, wheels, script, folder, timeout)


def _run_maker(core: Path, wheels: Sequence[tuple[dict, Path]], script: str, out: Path, timeout):
    """Run the Node maker: the pycs into ``out``; returns its [source, pyc] list."""
    with tempfile.TemporaryDirectory(prefix="promptdojo-bytecode-") as tmp:
        packages = Path(tmp) / "packages"
        packages.mkdir()
        for entry, path in wheels:
            os.symlink(path.resolve(), packages / entry["file_name"])
        job = {
            "pyodide": str(core),
            "packageDir": str(packages),
            "packages": [entry["name"] for entry, _ in wheels],
            "script": script,
            "out": str(out),
        }
        return _node_job(core, job, Path(tmp), out, timeout, "compiled wheels")


def _node_job(core: Path, job: dict, tmp: Path, out: Path, timeout: float, what: str) -> list:
    """Run the Node maker on ``job`` (written in ``tmp``); its [source, pyc] list, from ``out``."""
    job_file = tmp / "job.json"
    job_file.write_text(json.dumps(job))
    try:
        done = subprocess.run(
            [node(), str(MAKER), str(job_file)], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as error:
        raise CompiledWheelError(f"no {what} for {core}: {error}") from error
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        said = [line for line in lines if not line.startswith("at ")] or lines or ["(no output)"]
        raise CompiledWheelError(f"no {what} for {core}: {said[-1]}")
    return json.loads((out / "modules.json").read_text(encoding="utf-8"))


def _member(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_DATE)
    info.external_attr = 0o644 << 16
    return info


def _pack(wheel: Path, pycs: dict[str, str], folder: Path, target: Path) -> int:
    """Write the wheel's files, then the pycs (in ``folder``, by source member) of its modules,
    as a stored zip; returns how many pycs it holds. Members are named by their path below
    site-packages, as the wheel's are."""
    partial = target.with_name(target.name + ".tmp")
    count = 0
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(partial, "w") as out:
        names = [info.filename for info in source.infolist() if not info.is_dir()]
        for name in names:
            out.writestr(_member(name), source.read(name))
        for name in sorted(set(names) & set(pycs)):
            out.writestr(_member(pycs[name]), (folder / pycs[name]).read_bytes())
            count += 1
    partial.replace(target)
    return count


def _make(
    core: Path, wheels: Sequence[tuple[dict, Path]], script: str, folder: Path, timeout: float
) -> dict[str, CompiledWheel]:
    with tempfile.TemporaryDirectory(prefix="promptdojo-pycs-") as tmp:
        out = Path(tmp)
        compiled = _run_maker(core, wheels, script, out, timeout)
        pycs = dict(compiled)
        found, digests = {}, {}
        for entry, path in wheels:
            wheel = entry["file_name"]
            target = folder / f"{wheel.removesuffix('.whl')}.zip"
            count = _pack(path, pycs, out, target)
            if count == 0:
                target.unlink()
                continue
            sha256 = sha256_of(target)
            found[wheel] = CompiledWheel(wheel, target, sha256, count)
            digests[wheel] = [sha256, count]
    (folder / f"{_DIGESTS}.tmp").write_text(json.dumps(digests), encoding="utf-8")
    (folder / f"{_DIGESTS}.tmp").replace(folder / _DIGESTS)
    return found


def compiled_bundle(
    core: Path, bundle: LearnerBundle, cache_dir: Path, *, timeout: float = 300
) -> LearnerBundle:
    """``bundle`` with a pyc beside each of its modules, made by ``core``'s own Python: from
    ``cache_dir``, or made now (a few seconds, in Node). Raises :class:`CompiledWheelError` if
    Node cannot make it; a kept one that is damaged (no longer a zip, or a member that fails
    its CRC) is made again."""
    parts = {
        "pyodide": _core_digests(core),
        "bundle": bundle.digest,
        "maker": sha256_of(MAKER),
        "format": _FORMAT,
    }
    folder = cache_dir / BUNDLE_SUBFOLDER / _key(parts)
    folder.mkdir(parents=True, exist_ok=True)
    kept = folder / "bundle.zip"
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            found = kept.read_bytes()
        except OSError:
            found = None  # not made yet
        if found is not None and _intact(found):
            return bundle_from(found)
        data = _compile_bundle(core, bundle, timeout)
        partial = kept.with_name(kept.name + ".tmp")
        partial.write_bytes(data)
        partial.replace(kept)
        return bundle_from(data)


def _intact(data: bytes) -> bool:
    """Whether ``data`` is a zip whose every member has the CRC it records."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return archive.testzip() is None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error):
        return False


def _compile_bundle(core: Path, bundle: LearnerBundle, timeout: float) -> bytes:
    """The compiled bundle's zip: ``bundle``'s members as they are, then the pycs."""
    with tempfile.TemporaryDirectory(prefix="promptdojo-bundle-") as name:
        tmp = Path(name)
        sources, out = tmp / "sources", tmp / "out"
        with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
            modules = [n for n in archive.namelist() if n.endswith(".py")]
            for member in modules:
                (sources / member).parent.mkdir(parents=True, exist_ok=True)
                (sources / member).write_bytes(archive.read(member))
            job = {
                "pyodide": str(core),
                "files": modules,
                "sourceDir": str(sources),
                "out": str(out),
            }
            compiled = _node_job(core, job, tmp, out, timeout, "bytecode for the learner bundle")
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as result:
                for info in archive.infolist():
                    result.writestr(info, archive.read(info))
                for _, pyc in compiled:
                    member = _member(pyc)
                    member.compress_type = zipfile.ZIP_DEFLATED
                    result.writestr(member, (out / pyc).read_bytes())
    return buffer.getvalue()
