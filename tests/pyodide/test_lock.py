"""The pinned lock ships with the package, so validating lessons never needs a front-end build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from promptdojo.pyodide.dist import pyodide_core_dir
from promptdojo.pyodide.lock import PINNED_LOCK, PYODIDE_VERSION, Lock, PackageError
from tests.conftest import ROOT

NPM_PYODIDE = ROOT / "node_modules" / "pyodide"
NOT_IN_PYODIDE = ROOT / "tests" / "fixtures" / "malformed" / "import-not-in-pyodide"


def test_the_pinned_version_is_the_front_ends() -> None:
    spec = json.loads((ROOT / "package.json").read_text())["devDependencies"]["pyodide"]
    assert spec == PYODIDE_VERSION


def test_the_shipped_lock_is_the_pinned_releases() -> None:
    if not (NPM_PYODIDE / "pyodide-lock.json").is_file():
        pytest.skip("node_modules is not installed")
    assert PINNED_LOCK.read_bytes() == (NPM_PYODIDE / "pyodide-lock.json").read_bytes()
    core = pyodide_core_dir()
    if core is not None:
        assert core.name == PYODIDE_VERSION
        assert Lock.read(core) == Lock.pinned()


def test_the_pinned_lock_knows_numpy() -> None:
    lock = Lock.pinned()
    assert lock.version == PYODIDE_VERSION
    assert lock.package_for_import("numpy") == "numpy"
    assert lock.package_for_import("torch") is None
    assert "numpy" in lock.with_dependencies(["numpy"])
    with pytest.raises(PackageError, match="torch is not a package of Pyodide"):
        lock.with_dependencies(["torch"])


def test_validation_checks_imports_without_a_front_end_build(tmp_path: Path) -> None:
    """With no ``static/build`` at all, an import Pyodide lacks is still reported."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "import promptdojo.pyodide.dist as dist\n"
        f"dist.build_dir = lambda: Path({str(tmp_path)!r})\n"
        "assert dist.pyodide_core_dir() is None\n"
        "from promptdojo.course.validate import validate\n"
        f"result = validate([Path({str(NOT_IN_PYODIDE)!r})])\n"
        "print('\\n'.join(d.message for d in result.diagnostics))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f"imports torch, which Pyodide {PYODIDE_VERSION} cannot provide" in out.stdout


def test_install_order_puts_every_package_after_what_it_depends_on(tmp_path: Path) -> None:
    """The page installs wheels in this order; a sorted list would put "app" before "zlib"."""
    entries = {
        "app": {"name": "app", "depends": ["mid", "zlib"], "file_name": "app.whl", "sha256": "a"},
        "mid": {"name": "mid", "depends": ["zlib"], "file_name": "mid.whl", "sha256": "m"},
        "zlib": {"name": "zlib", "depends": [], "file_name": "zlib.whl", "sha256": "z"},
        "other": {"name": "other", "depends": [], "file_name": "other.whl", "sha256": "o"},
    }
    lock = Lock(version="0.0.0-test", packages=entries)
    assert [e["name"] for e in lock.install_order(["app"])] == ["zlib", "mid", "app"]
    job = lock.wheel_job(["app"], tmp_path)
    assert job[-1] == {
        "name": "app",
        "file_name": "app.whl",
        "sha256": "a",
        "install_dir": None,
        "path": str(tmp_path / "app.whl"),
    }
    with pytest.raises(PackageError, match=r"nope is not a package of Pyodide 0\.0\.0-test"):
        lock.install_order(["nope"])
