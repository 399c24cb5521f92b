"""Memory snapshots: made in Node, reproducible, keyed by what they hold, restored by the check."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import zstandard

from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.dist import core_dir
from promptdojo.pyodide.lock import Lock
from promptdojo.pyodide.node import RUNNER, boot_module, node
from promptdojo.pyodide.release import Release
from promptdojo.pyodide.snapshot import (
    Snapshot,
    SnapshotError,
    cached_snapshot,
    ensure_snapshot,
    snapshot_key,
    snapshot_packages,
)
from tests.conftest import ROOT
from tests.e2e.conftest import SNAPSHOTS
from tests.support.snapshots import damaged, plant

STDLIB = ROOT / "tests" / "fixtures" / "pyodide" / "stdlib"


def check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", "--pyodide", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "CI": "true"},
        timeout=900,
    )


def test_two_builds_give_the_same_bytes(tmp_path: Path) -> None:
    shared = ensure_snapshot(core_dir(), build_bundle(), SNAPSHOTS)
    fresh = ensure_snapshot(core_dir(), build_bundle(), tmp_path)
    assert fresh.path != shared.path
    assert fresh.sha256 == shared.sha256
    assert fresh.path.read_bytes() == shared.path.read_bytes()
    assert fresh.filename == f"snapshot-{fresh.sha256[:16]}.bin"
    # Served precompressed: both copies are there, and much smaller (its zero pages are already
    # left out of the file, so what compresses is the interpreter's own memory).
    for suffix in ("zst", "br", "gz"):
        assert fresh.encoded(suffix).stat().st_size < fresh.size / 2, suffix
    # The zstd copy is deterministic too, decodes to the snapshot, and keeps to the 8 MiB window
    # browsers decode (RFC 9659; Chromium refuses a larger one).
    zst = fresh.encoded("zst").read_bytes()
    assert zst == shared.encoded("zst").read_bytes()
    assert zstandard.get_frame_parameters(zst).window_size <= 8 * 1024 * 1024
    assert zstandard.ZstdDecompressor().decompress(zst) == fresh.path.read_bytes()


def test_the_key_follows_the_bundle_and_the_pyodide_build(tmp_path: Path) -> None:
    bundle = build_bundle()
    other_bundle = dataclasses.replace(bundle, digest="0" * 16)
    assert snapshot_key(core_dir(), bundle) != snapshot_key(core_dir(), other_bundle)
    core = tmp_path / "core"
    core.mkdir()
    for path in core_dir().iterdir():
        if path.is_file():
            (core / path.name).write_bytes(path.read_bytes())
    assert snapshot_key(core, bundle) == snapshot_key(core_dir(), bundle)
    (core / "python_stdlib.zip").write_bytes(b"another stdlib")
    assert snapshot_key(core, bundle) != snapshot_key(core_dir(), bundle)


def test_a_cache_folder_without_its_digest_is_not_a_snapshot(tmp_path: Path) -> None:
    folder = plant(tmp_path, core_dir(), b"bytes")
    assert cached_snapshot(core_dir(), build_bundle(), tmp_path) is not None
    (folder / "snapshot.sha256").unlink()
    assert cached_snapshot(core_dir(), build_bundle(), tmp_path) is None


def test_no_pyodide_there_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SnapshotError, match=f"no snapshot for {tmp_path}: its python_stdlib.zip"):
        ensure_snapshot(tmp_path, build_bundle(), tmp_path / "cache")
    # With the standard library there, the next missing file, not a JavaScript stack's frame.
    (tmp_path / "python_stdlib.zip").write_bytes((core_dir() / "python_stdlib.zip").read_bytes())
    with pytest.raises(SnapshotError, match=f"no snapshot for {tmp_path}") as raised:
        ensure_snapshot(tmp_path, build_bundle(), tmp_path / "cache")
    assert "pyodide.mjs" in str(raised.value), raised.value
    assert ": at " not in str(raised.value), raised.value


def test_the_check_restores_the_snapshot_and_fails_a_damaged_one(tmp_path: Path) -> None:
    """Under --pyodide every step restores the snapshot; one that is damaged fails the step."""
    lesson = tmp_path / "stdlib"
    lesson.mkdir()
    for name in ("lesson.yaml", "01-passes.md"):
        if (STDLIB / name).is_file():
            (lesson / name).write_bytes((STDLIB / name).read_bytes())
    passed = check(str(lesson), "--snapshot-cache", str(SNAPSHOTS))
    assert passed.returncode == 0, passed.stdout + passed.stderr
    data, digest = damaged(core_dir())
    plant(tmp_path / "cache", core_dir(), data, digest=digest)
    failed = check(str(lesson), "--snapshot-cache", str(tmp_path / "cache"))
    assert failed.returncode == 1
    assert "the snapshot is damaged: its SHA-256 is" in failed.stdout
    assert "--no-snapshot" in failed.stdout
    cold = check(str(lesson), "--snapshot-cache", str(tmp_path / "cache"), "--no-snapshot")
    assert cold.returncode == 0, cold.stdout + cold.stderr


#: The standard library modules in the interpreter, one name a line.
_STDLIB_MODULES = """\
import sys
print("\\n".join(m for m in sys.modules if m.split(".")[0] in sys.stdlib_module_names))
0
"""
#: The same, after importing numpy, every module of the learner library (what a lesson's cells
#: import) and the warm-up cell.
_STDLIB_MODULES_AT_WORK = (
    "import numpy, pkgutil, promptdojo, promptdojo.kernel\n"
    "for found in pkgutil.walk_packages(promptdojo.__path__, 'promptdojo.'):\n"
    "    __import__(found.name)\n"
    "assert promptdojo.kernel.Kernel().warm_up(numpy=True).ok\n"
) + _STDLIB_MODULES


def restored_run(
    release: Release,
    folder: Path,
    script: str,
    packages: list[str],
    stdlib: Path | None = None,
    snapshot: Snapshot | None = None,
    ready: dict | None = None,
) -> set[str]:
    """Restore the snapshot of ``release`` (or ``snapshot``) under Node, boot as a page does
    (``packages`` installed, the snapshot's standard library or ``stdlib``), run ``script``; the
    words it printed. ``ready``, if given, gets the boot's ready detail."""
    snapshot = snapshot or ensure_snapshot(release.path, build_bundle(), SNAPSHOTS)
    lock = Lock.read(release.path, version=release.version)
    bundle = folder / "bundle.zip"
    bundle.write_bytes(build_bundle().data)
    job = folder / "job.json"
    job.write_text(
        json.dumps(
            {
                "boot": str(boot_module()),
                "pyodide": str(release.path),
                "packageDir": str(release.path),
                "packages": packages,
                # Installed from the wheels prepared beside the boot, as in a page.
                "packageWheels": lock.wheel_job(packages, release.path),
                "bundle": str(bundle),
                "snapshot": {
                    "path": str(snapshot.path),
                    "sha256": snapshot.sha256,
                    "stdlib": str(stdlib or snapshot.stdlib),
                    "packages": snapshot.packages,
                },
                "script": script,
                "showReady": True,
            }
        )
    )
    done = subprocess.run(
        [node(), str(RUNNER), str(job)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first, _, printed = done.stdout.partition("\n")
    assert first.startswith("ready: "), done.stdout
    if ready is not None:
        ready.update(json.loads(first.removeprefix("ready: ")))
    return set(printed.split())


def test_after_a_restore_numpy_and_the_library_need_nothing_more_from_the_stdlib(
    numpy_release: Release, tmp_path: Path
) -> None:
    """The snapshot holds the standard library modules numpy and the library import.

    Each one a page imports after the restore is read from Pyodide's standard library zip,
    compiled from source and run on every boot (numpy's: a fraction of a second in Chromium,
    up to several times that in WebKit, whose cold interpreter runs slower); in the snapshot it
    is ready.
    """
    restored = restored_run(numpy_release, tmp_path, _STDLIB_MODULES, [])
    at_work = restored_run(numpy_release, tmp_path, _STDLIB_MODULES_AT_WORK, ["numpy"])
    late = sorted(at_work - restored - {"pkgutil"})  # pkgutil: the test's own
    where = "SNAPSHOT_IMPORTS in static/js/kernel/snapshot-make.js"
    assert not late, f"add to {where}: {', '.join(late)}"


#: Standard library modules no snapshot holds, imported after a restore: read from the archive at
#: the offsets the snapshot's zip importer recorded when it was made.
_LATE_IMPORTS = """\
import csv, fractions, statistics
print(fractions.Fraction(1, 3) + fractions.Fraction(1, 2), statistics.median([1, 5]), csv.QUOTE_ALL)
0
"""


def test_a_restore_reads_the_standard_library_it_was_made_with(
    numpy_release: Release, tmp_path: Path
) -> None:
    """The snapshot is made with Pyodide's standard library stored, and restores with it; with
    Pyodide's own archive (the same modules, each deflated, at other offsets) in its place, a
    module the snapshot does not hold cannot be imported: pages must load the snapshot's."""
    snapshot = ensure_snapshot(numpy_release.path, build_bundle(), SNAPSHOTS)
    with zipfile.ZipFile(snapshot.stdlib) as stored:
        assert {m.compress_type for m in stored.infolist()} == {zipfile.ZIP_STORED}
    printed = restored_run(numpy_release, tmp_path, _LATE_IMPORTS, [])
    assert {"5/6", "3.0", "1"} <= printed, printed
    with pytest.raises(AssertionError, match="bad local file header"):
        restored_run(
            numpy_release,
            tmp_path,
            _LATE_IMPORTS,
            [],
            stdlib=numpy_release.path / "python_stdlib.zip",
        )


#: Run first after the boot: whether the snapshot's imports came with it, then numpy at work (its
#: libraries' code and data where the snapshot's objects point), the global generator seeded
#: afresh, and a module of numpy the snapshot did not import, read from the files written.
_NUMPY_AT_WORK = """\
import sys
print("held:" + str("promptdojo.serving" in sys.modules))  # of the snapshot's imports only
import numpy as np
from promptdojo.decoding import softmax
print(int(np.arange(10).sum()), round(float(np.linalg.inv(np.eye(2) * 2)[0, 0]), 2))
print(np.random.default_rng(0).integers(0, 1000, 3).tolist())
print("draw:" + repr(np.random.random()))
print("late:" + str("numpy.lib.recfunctions" in sys.modules))
from numpy.lib import recfunctions
print(recfunctions.get_names(np.dtype([("a", int)])), softmax(np.zeros(2)).tolist())
import gc
gc.collect()
0
"""


def packaged_snapshot(release: Release) -> Snapshot:
    """``release``'s snapshot with numpy in it, as a server with numpy's wheel makes it."""
    lock = Lock.read(release.path, version=release.version)
    wheels = [(entry, release.path / entry["file_name"]) for entry in lock.install_order(["numpy"])]
    held = snapshot_packages(release.path, wheels)
    return ensure_snapshot(release.path, build_bundle(), SNAPSHOTS, packages=held)


def test_a_snapshot_holds_numpy_imported_and_a_page_restores_it(
    numpy_release: Release, tmp_path: Path
) -> None:
    """numpy's libraries are loaded before the snapshot is made and before it is restored, at the
    same places: the restored interpreter has numpy imported and working, its global generator
    seeded again, and the modules it did not import importable."""
    snapshot = packaged_snapshot(numpy_release)
    record = snapshot.packages
    assert record is not None
    assert record["packages"] == ["numpy"]
    assert {"numpy", "promptdojo.decoding"} <= set(record["imports"])
    assert len(record["libraries"]) == len(record["tableBases"]) > 1
    ready: dict = {}
    printed = restored_run(
        numpy_release, tmp_path, _NUMPY_AT_WORK, ["numpy"], snapshot=snapshot, ready=ready
    )
    assert ready["restored"] is True, ready
    assert ready["inSnapshot"] == ["numpy"], ready
    assert "numpy" not in ready["importedAfterRestore"], ready
    # The same numbers as CPython's numpy (the generator's stream is numpy's own, everywhere),
    # and a module numpy had not imported, read from the files written after the restore.
    expected = {"held:True", "45", "0.5", "[850,", "636,", "511]", "late:False", "('a',)", "[0.5,"}
    assert expected <= printed, printed
    # The global generator is seeded again on each restore, as on a cold boot: the snapshot's
    # own state would give every page the same draws.
    again = restored_run(numpy_release, tmp_path, _NUMPY_AT_WORK, ["numpy"], snapshot=snapshot)
    draws = [{word for word in run if word.startswith("draw:")} for run in (printed, again)]
    assert all(len(words) == 1 for words in draws), draws
    assert draws[0] != draws[1], draws


def test_a_snapshot_whose_libraries_would_sit_elsewhere_is_not_restored(
    numpy_release: Release, tmp_path: Path
) -> None:
    """A record that does not match the page's libraries or where its boot puts them (another
    heap end, other table slots, other libraries, a table past the reserve, a damaged record), or
    a page without the wheels, is refused before the snapshot's memory is restored: the page
    boots from scratch, says why, and installs numpy itself."""
    snapshot = packaged_snapshot(numpy_release)
    record = snapshot.packages
    broken = [
        ("sit elsewhere", {**record, "heapBase": record["heapBase"] + 16}),
        ("sit elsewhere", {**record, "tableBases": [b + 1 for b in record["tableBases"]]}),
        ("other libraries", {**record, "libraries": record["libraries"][::-1]}),
        ("slots, past", {**record, "tableReserve": 1024}),
        (
            "record of its packages is damaged",
            {**record, "opened": [[1, "/lib/elsewhere.so", False]]},
        ),
    ]
    for why, moved in broken:
        ready: dict = {}
        printed = restored_run(
            numpy_release,
            tmp_path,
            _NUMPY_AT_WORK,
            ["numpy"],
            snapshot=dataclasses.replace(snapshot, packages=moved),
            ready=ready,
        )
        assert ready["restored"] is False, (why, ready)
        assert why in (ready["snapshotFailed"] or ""), (why, ready)
        assert {"held:False", "45", "0.5", "[850,", "('a',)"} <= printed, (why, printed)
    ready = {}
    held = 'import sys\nprint("held:" + str("promptdojo.serving" in sys.modules))\n0\n'
    printed = restored_run(numpy_release, tmp_path, held, [], snapshot=snapshot, ready=ready)
    assert "has no wheels for" in (ready["snapshotFailed"] or ""), ready
    assert "held:False" in printed, printed
