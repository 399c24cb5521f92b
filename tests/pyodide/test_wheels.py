"""Lesson packages from prepared wheels (static/js/kernel/wheels.js), in real Pyodide 0.29.0 with
numpy.

The page and ``check --pyodide`` unpack and compile a lesson's wheels while the interpreter
starts, then install them without Pyodide's loader. These tests boot Node the way the check does
and hold that install to Pyodide's own: the same files, byte for byte, the same records, and a
working numpy. A wheel that cannot be used is left to ``loadPackage``, which loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.lock import Lock
from promptdojo.pyodide.node import boot_module, node
from promptdojo.pyodide.release import Release
from tests.conftest import ROOT

REPORT = ROOT / "tests" / "support" / "boot_report.mjs"
INVERSE = [0.6, -0.2, -0.2, 0.4]


def boot(
    release: Release, tmp_path: Path, wheels: list[dict] | None, library: bytes | None = None
) -> dict:
    """Boot the release under Node with numpy from ``wheels`` (None: through loadPackage), and
    the learner bundle ``library`` (default: this checkout's, without bytecode)."""
    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(library or build_bundle().data)
    job = {
        "boot": str(boot_module()),
        "pyodide": str(release.path),
        "packageDir": str(release.path),
        "packages": ["numpy"],
        "packageWheels": wheels or [],
        "bundle": str(bundle),
    }
    job_file = tmp_path / "job.json"
    job_file.write_text(json.dumps(job))
    done = subprocess.run(
        [node(), str(REPORT), str(job_file)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["ready"] = next(detail for phase, detail in report["phases"] if phase == "ready")
    report["stderr"] = done.stderr
    return report


def numpy_wheels(release: Release) -> list[dict]:
    return Lock.read(release.path, version=release.version).wheel_job(["numpy"], release.path)


def test_prepared_wheels_install_what_load_package_installs(
    numpy_release: Release, tmp_path: Path
) -> None:
    prepared = boot(numpy_release, tmp_path, numpy_wheels(numpy_release))
    loader = boot(numpy_release, tmp_path, None)
    assert prepared["ready"]["fromWheels"] is True, prepared["ready"]
    assert loader["ready"]["fromWheels"] is False
    assert prepared["ready"]["loaded"] == loader["ready"]["loaded"] == ["numpy"]
    assert any(path.endswith(".so") for path, _ in prepared["files"])
    assert prepared["files"] == loader["files"]
    assert prepared["records"] == loader["records"] == {"numpy": ["pyodide.loadPackage", "pyodide"]}
    assert prepared["loaded"] == loader["loaded"] == {"numpy": "default channel"}
    assert prepared["inverse"] == pytest.approx(INVERSE)
    # The install sets the offset table's resolved entries aside while it instantiates the
    # libraries: afterwards the table holds what loadPackage's install leaves there.
    assert prepared["offsetTable"]["names"] == loader["offsetTable"]["names"]
    assert len(prepared["offsetTable"]["names"]) > 9000
    assert prepared["offsetTable"]["unresolved"] == loader["offsetTable"]["unresolved"]
    # The wheel holds no bytecode, and the interpreter writes none (test_bytecode.py: with it);
    # nor does the learner bundle here.
    assert prepared["pycs"][1] == loader["pycs"][1] == 0
    assert prepared["library_pycs"][0] > 5
    assert prepared["library_pycs"][1] == 0


def test_a_damaged_wheel_is_left_to_load_package(numpy_release: Release, tmp_path: Path) -> None:
    wheels = numpy_wheels(numpy_release)
    damaged = tmp_path / wheels[0]["file_name"]
    data = bytearray(Path(wheels[0]["path"]).read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    wheels[0]["path"] = str(damaged)
    report = boot(numpy_release, tmp_path, wheels)
    assert report["ready"]["fromWheels"] is False
    assert "is damaged: its SHA-256 is" in report["ready"]["wheelsFailed"]
    assert report["ready"]["missing"] == []
    assert report["inverse"] == pytest.approx(INVERSE)


def test_a_wheel_whose_member_climbs_out_writes_nothing(
    numpy_release: Release, tmp_path: Path
) -> None:
    evil = tmp_path / "numpy-2.2.5-cp313-cp313-pyodide_2025_0_wasm32.whl"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr("numpy-2.2.5.dist-info/METADATA", "Name: numpy\nVersion: 2.2.5\n")
        archive.writestr("../escape.py", "raise SystemExit('escaped')\n")
    wheels = numpy_wheels(numpy_release)
    wheels[0] |= {"path": str(evil), "sha256": hashlib.sha256(evil.read_bytes()).hexdigest()}
    report = boot(numpy_release, tmp_path, wheels)
    assert "../escape.py is a path that climbs out of its folder" in report["ready"]["wheelsFailed"]
    assert report["escaped"] is False
    assert report["inverse"] == pytest.approx(INVERSE)
