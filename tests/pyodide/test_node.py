"""Python in real Pyodide under Node, booted by the browser's own boot module."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from promptdojo.pyodide.node import NOT_RUN, run_python
from promptdojo.pyodide.release import Release
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(
    subprocess.run(["node", "--version"], capture_output=True).returncode != 0,
    reason="node is not installed",
)


def test_runs_in_pyodide_with_the_learner_bundle_and_returns_the_status(tmp_path: Path) -> None:
    script = (
        "import sys, promptdojo.kernel\n"
        "r = promptdojo.kernel.Kernel().run('6 * 7')\n"
        "print(sys.platform, r.value['text/plain'])\n"
        "5"
    )
    result = run_python(script, cache_dir=tmp_path)
    assert result.stdout.strip() == "emscripten 42"
    assert result.returncode == 5


def test_a_python_error_is_status_2_with_the_traceback(tmp_path: Path) -> None:
    result = run_python("1 / 0", cache_dir=tmp_path)
    assert result.returncode == 2
    assert "ZeroDivisionError" in result.stderr


def test_a_package_missing_from_the_cache_is_not_run_and_never_fetched(tmp_path: Path) -> None:
    result = run_python("print('ran')\n0", packages=["numpy"], cache_dir=tmp_path)
    assert result.returncode == NOT_RUN
    assert "not run: numpy could not be loaded" in result.stderr
    assert "ran" not in result.stdout
    assert str(tmp_path) in result.stderr, "it looked in the cache folder, not on a CDN"


def test_make_test_pyodide_says_numpy_is_missing_with_a_distinct_status(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "test_pyodide.py"), "--cache", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == NOT_RUN
    assert f"not run: numpy is not cached in {tmp_path}" in done.stderr
    assert "promptdojo pyodide fetch numpy" in done.stderr
    assert "passed" not in done.stdout + done.stderr


def test_the_library_tests_pass_inside_pyodide_with_numpy(numpy_release: Release) -> None:
    """``make test-pyodide``: tests/library, run by pytest inside Pyodide 0.29.0 with numpy."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "test_pyodide.py"),
            "--pyodide-dir",
            str(numpy_release.path),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    closing = done.stdout.strip().splitlines()[-1]
    # pytest's closing line, e.g. "112 passed, 2 skipped, 2 warnings in 223.25s (0:03:43)":
    # nothing failed, and only the two tests that compare with the safetensors package (not
    # among Pyodide's packages: tests/library/test_safetensors.py) skipped.
    found = re.fullmatch(
        r"(\d+) passed(?:, (\d+) skipped)?(?:, \d+ warnings?)? in [\d.]+s(?: \([\d:]+\))?", closing
    )
    assert found, closing
    assert int(found[2] or 0) <= 2, closing
    assert int(found[1]) >= 90, "the whole of tests/library ran"
