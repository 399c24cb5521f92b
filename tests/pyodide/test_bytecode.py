"""Compiled wheels (promptdojo.pyodide.bytecode), made by real Pyodide 0.29.0 in Node: the wheel's
own files unchanged plus a pyc for each module ``import numpy`` and the warm-up load, which the
boot's install then uses, with numpy's tracebacks still showing their source lines. And the
compiled learner bundle: the bundle unchanged plus a pyc for each of its modules, which the
library's imports then use."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from promptdojo.kernel_warm_up import WARM_UP, WARM_UP_NUMPY
from promptdojo.pyodide.bundle import LearnerBundle, build_bundle
from promptdojo.pyodide.bytecode import (
    BUNDLE_SUBFOLDER,
    CompiledWheel,
    CompiledWheelError,
    compiled_bundle,
    ensure_compiled,
)
from promptdojo.pyodide.lock import Lock
from promptdojo.pyodide.release import Release
from tests.e2e.conftest import SNAPSHOTS
from tests.pyodide.test_wheels import INVERSE, boot, numpy_wheels


@pytest.fixture(scope="module")
def compiled(numpy_release: Release) -> CompiledWheel:
    """numpy's compiled wheel, in the cache the servers of the tests share (made once)."""
    entry = Lock.read(numpy_release.path, version=numpy_release.version).packages["numpy"]
    wheel = numpy_release.path / entry["file_name"]
    made = ensure_compiled(numpy_release.path, [(entry, wheel)], SNAPSHOTS, WARM_UP + WARM_UP_NUMPY)
    return made[entry["file_name"]]


def test_a_compiled_wheel_holds_the_wheel_unchanged_and_the_loaded_modules_pycs(
    numpy_release: Release, compiled: CompiledWheel
) -> None:
    wheel = numpy_release.path / compiled.wheel
    with zipfile.ZipFile(wheel) as original, zipfile.ZipFile(compiled.path) as archive:
        files = [i.filename for i in original.infolist() if not i.is_dir()]
        names = archive.namelist()
        assert names[: len(files)] == files
        assert all(archive.read(name) == original.read(name) for name in files)
        pycs = names[len(files) :]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in archive.infolist())
    assert len(pycs) == compiled.modules
    assert "numpy/__pycache__/__init__.cpython-313.pyc" in pycs
    assert all("/__pycache__/" in name and name.endswith(".cpython-313.pyc") for name in pycs)
    # Only what was loaded: numpy's own tests, f2py and its typing stubs' modules are not.
    assert len(pycs) < sum(name.endswith(".py") for name in files) * 0.7
    assert not any(name.startswith(("numpy/f2py/", "numpy/distutils/")) for name in pycs)
    assert compiled.filename.endswith(f"-{compiled.sha256[:16]}.zip")


def test_the_same_inputs_find_the_made_archive(
    numpy_release: Release, compiled: CompiledWheel
) -> None:
    entry = Lock.read(numpy_release.path, version=numpy_release.version).packages["numpy"]
    wheel = numpy_release.path / entry["file_name"]
    again = ensure_compiled(
        numpy_release.path, [(entry, wheel)], compiled.path.parents[2], WARM_UP + WARM_UP_NUMPY
    )
    assert again[entry["file_name"]] == compiled


def test_numpy_loads_its_modules_from_the_pycs_and_keeps_its_source_lines(
    numpy_release: Release, compiled: CompiledWheel, tmp_path: Path
) -> None:
    wheels = numpy_wheels(numpy_release)
    wheels[0] |= {"path": str(compiled.path), "sha256": compiled.sha256}
    report = boot(numpy_release, tmp_path, wheels)
    assert report["ready"]["fromWheels"] is True, report["ready"]
    modules, with_pyc, dont_write = report["pycs"]
    # The interpreter writes no pyc itself: each one is the archive's, and each is used.
    assert dont_write is True
    assert modules > 50
    assert with_pyc == modules
    assert report["inverse"] == pytest.approx(INVERSE)
    # A numpy frame of the traceback shows its source line, read from the .py file.
    assert 'numpy/linalg/_linalg.py", line' in report["traceback"]
    assert (
        "raise LinAlgError('Last 2 dimensions of the array must be square')" in report["traceback"]
    )


@pytest.fixture(scope="module")
def library(numpy_release: Release) -> LearnerBundle:
    """The learner bundle compiled by the release, in the cache the tests' servers share."""
    return compiled_bundle(numpy_release.path, build_bundle(), SNAPSHOTS)


def test_a_compiled_bundle_holds_the_bundle_unchanged_and_a_pyc_for_each_module(
    library: LearnerBundle,
) -> None:
    plain = build_bundle()
    with (
        zipfile.ZipFile(io.BytesIO(plain.data)) as original,
        zipfile.ZipFile(io.BytesIO(library.data)) as archive,
    ):
        names = archive.namelist()
        assert names[: len(plain.files)] == list(plain.files)
        assert all(archive.read(name) == original.read(name) for name in plain.files)
    modules = [name for name in plain.files if name.endswith(".py")]
    pycs = names[len(plain.files) :]
    assert len(pycs) == len(modules) > 20
    assert "promptdojo/display/__pycache__/svg.cpython-313.pyc" in pycs
    assert all("/__pycache__/" in name and name.endswith(".cpython-313.pyc") for name in pycs)
    assert library.files == tuple(names)
    assert library.filename == f"promptdojo-{library.digest}.zip" != plain.filename


def test_a_kept_compiled_bundle_is_found_and_a_damaged_one_made_again(
    numpy_release: Release, library: LearnerBundle, tmp_path: Path
) -> None:
    made = compiled_bundle(numpy_release.path, build_bundle(), tmp_path)
    assert made == library  # the same inputs give the same bytes
    kept = next((tmp_path / BUNDLE_SUBFOLDER).glob("*/bundle.zip"))
    kept.write_bytes(b"not a zip")
    assert compiled_bundle(numpy_release.path, build_bundle(), tmp_path) == library
    assert kept.read_bytes() == library.data
    # Still a zip, but one byte of a member's data changed: its CRC says so.
    with zipfile.ZipFile(kept) as archive:
        member = archive.getinfo("promptdojo/__pycache__/kernel.cpython-313.pyc")
    data = bytearray(library.data)
    data[member.header_offset + 30 + len(member.filename) + 20] ^= 0xFF
    kept.write_bytes(bytes(data))
    assert compiled_bundle(numpy_release.path, build_bundle(), tmp_path) == library
    assert kept.read_bytes() == library.data


def test_a_core_node_cannot_run_makes_no_compiled_bundle(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    with pytest.raises(CompiledWheelError, match="no bytecode for the learner bundle"):
        compiled_bundle(tmp_path / "core", build_bundle(), tmp_path / "cache")


def test_the_library_loads_its_modules_from_the_compiled_bundles_pycs(
    numpy_release: Release, compiled: CompiledWheel, library: LearnerBundle, tmp_path: Path
) -> None:
    wheels = numpy_wheels(numpy_release)
    wheels[0] |= {"path": str(compiled.path), "sha256": compiled.sha256}
    report = boot(numpy_release, tmp_path, wheels, library.data)
    modules, with_pyc = report["library_pycs"]
    assert modules > 5
    assert with_pyc == modules
    assert report["inverse"] == pytest.approx(INVERSE)
