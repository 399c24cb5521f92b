"""Run the learner library's tests inside real Pyodide under Node (``make test-pyodide``).

numpy comes from the package cache folder (default ``.cache/pyodide-packages``, the server's
own); pytest and hypothesis are pure-Python wheels downloaded from PyPI into
``.cache/pyodide-test-wheels``.
When numpy is not cached, nothing runs: the script says so and exits with status 3, never 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from promptdojo.checking.pyodide import NOT_RUN, core_dir, run_python  # noqa: E402
from promptdojo.web.package_cache import Lock, missing, not_cached_message  # noqa: E402

TEST_WHEELS = [
    "pytest",
    "hypothesis",
    "pluggy",
    "iniconfig",
    "packaging",
    "attrs",
    "sortedcontainers",
    "pygments",
]
PYTEST = """
import sys, pytest
code = pytest.main(["/work/tests/library", "-q", "-p", "no:cacheprovider", "--rootdir=/work"])
int(code)
"""


def test_wheels(folder: Path) -> list[Path]:
    """Pure-Python wheels for pytest and hypothesis, fetched from PyPI once."""
    folder.mkdir(parents=True, exist_ok=True)
    if not list(folder.glob("pytest-*.whl")):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(folder),
                *TEST_WHEELS,
            ],
            check=True,
        )
    return sorted(folder.glob("*.whl"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "pyodide-packages")
    args = parser.parse_args()
    absent = missing(["numpy"], args.cache, Lock.read(core_dir()))
    if absent:
        print(not_cached_message(absent, args.cache), file=sys.stderr)
        return NOT_RUN
    wheels = test_wheels(ROOT / ".cache" / "pyodide-test-wheels")
    result = run_python(
        PYTEST,
        packages=["numpy"],
        cache_dir=args.cache,
        wheels=wheels,
        mounts=[(ROOT / "tests", "/work/tests")],
    )
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main())
