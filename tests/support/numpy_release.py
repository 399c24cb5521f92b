"""A real Pyodide 0.29.0 release with numpy, unpacked into a folder: test data only.

No registry reachable from here serves a Pyodide build of numpy, except one: the PyPI package
``gbdraw==0.14.2`` vendors the official Pyodide 0.29.0 build of numpy inside its wheel. This module
builds a release folder from

- the Pyodide 0.29.0 core, from npm (the ``pyodide-0.29`` alias in package.json's devDependencies);
- that numpy wheel, taken out of gbdraw's wheel and checked against the sha256 that 0.29.0's own
  ``pyodide-lock.json`` names, so what the tests run is byte for byte the official build.

The folder is cached under ``.cache/`` and rebuilt only when missing or changed. It is never
shipped and never served outside tests. ``python -m tests.support.numpy_release`` builds it and
prints its path (``make test-pyodide`` uses that).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from promptdojo.pyodide.release import COMMON_FILES, LOADERS, Release

ROOT = Path(__file__).resolve().parent.parent.parent
VERSION = "0.29.0"
#: Where npm puts the 0.29.0 core (package.json: "pyodide-0.29": "npm:pyodide@0.29.0").
NPM_CORE = ROOT / "node_modules" / "pyodide-0.29"
CACHE = ROOT / ".cache" / "test-pyodide"
SOURCE = "gbdraw==0.14.2"
WHEEL = "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl"
INSIDE = f"gbdraw/web/vendor/pyodide-wheels/{WHEEL}"


class ReleaseUnavailableError(RuntimeError):
    """The release cannot be built here; the message says why and what to do."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _numpy_entry() -> dict:
    """numpy's entry in 0.29.0's own lock: the file name and sha256 the wheel must have."""
    package = NPM_CORE / "package.json"
    if not package.is_file():
        raise ReleaseUnavailableError(f"{NPM_CORE} is missing: run `npm ci`")
    version = json.loads(package.read_text())["version"]
    if version != VERSION:
        raise ReleaseUnavailableError(f"{NPM_CORE} holds Pyodide {version}, not {VERSION}")
    entry = json.loads((NPM_CORE / "pyodide-lock.json").read_text())["packages"]["numpy"]
    if entry["file_name"] != WHEEL:
        raise ReleaseUnavailableError(f"Pyodide {VERSION}'s lock names {entry['file_name']}")
    return entry


def _numpy_wheel(cache: Path, sha256: str) -> bytes:
    """The numpy wheel's bytes, from the cache or taken out of gbdraw's wheel from PyPI."""
    kept = cache / WHEEL
    if kept.is_file() and _sha256(data := kept.read_bytes()) == sha256:
        return data
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--dest",
                tmp,
                SOURCE,
            ],
            capture_output=True,
            text=True,
        )
        found = list(Path(tmp).glob("gbdraw-*.whl"))
        if done.returncode != 0 or not found:
            raise ReleaseUnavailableError(
                f"`pip download {SOURCE}` failed (is PyPI reachable?): "
                + (done.stderr.strip().splitlines() or ["no wheel"])[-1]
            )
        with zipfile.ZipFile(found[0]) as outer:
            data = outer.read(INSIDE)
    if _sha256(data) != sha256:
        raise ReleaseUnavailableError(
            f"{INSIDE} in {SOURCE} does not match the sha256 in Pyodide {VERSION}'s lock"
        )
    kept.write_bytes(data)
    return data


def build(cache: Path = CACHE) -> Release:
    """The release folder, built once: the 0.29.0 core plus the checked numpy wheel.

    Test processes that start together (pytest-xdist's workers) build it one at a time: the
    others wait, then find it built, and none replaces a folder another one's servers use."""
    entry = _numpy_entry()
    folder = cache / f"pyodide-{VERSION}-numpy"
    wheel = folder / WHEEL

    def built() -> bool:  # the wheel, written last, is there and whole
        return wheel.is_file() and _sha256(wheel.read_bytes()) == entry["sha256"]

    if built():
        return Release.open(folder)
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return Release.open(folder) if built() else _build(cache, folder, entry)


def _build(cache: Path, folder: Path, entry: dict) -> Release:
    """Stage the release beside ``folder``, then move it into place."""
    data = _numpy_wheel(cache, entry["sha256"])
    staging = Path(tempfile.mkdtemp(dir=cache, prefix=".building-"))
    staging.chmod(0o755)
    try:
        for name in (*COMMON_FILES, *LOADERS, "package.json"):
            if (NPM_CORE / name).is_file():
                shutil.copyfile(NPM_CORE / name, staging / name)
        (staging / WHEEL).write_bytes(data)  # last: its presence marks a complete folder
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Release.open(folder)


if __name__ == "__main__":
    try:
        print(build().path)
    except ReleaseUnavailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
