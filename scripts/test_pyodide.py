"""Run the learner library's tests inside real Pyodide under Node (``make test-pyodide``).

numpy comes from the package cache folder (default ``.cache/pyodide-packages``, the server's
own), or, with ``--pyodide-dir``, from an unpacked Pyodide release that holds it (the tests use
a real 0.29.0 release with numpy: ``python -m tests.support.numpy_release``). pytest and
hypothesis are pure-Python wheels downloaded from PyPI into ``.cache/pyodide-test-wheels``.
When numpy is not cached, nothing runs: the script says so and exits with status 3, never 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from promptdojo.pyodide.cache import missing, not_cached_message  # noqa: E402
from promptdojo.pyodide.dist import core_dir  # noqa: E402
from promptdojo.pyodide.lock import Lock  # noqa: E402
from promptdojo.pyodide.node import NOT_RUN, run_python  # noqa: E402
from promptdojo.pyodide.release import Release  # noqa: E402

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
# test_pyodide_safety inspects the package's source from CPython (and imports the bundle
# builder, which Pyodide does not get): it checks what may run in Pyodide, not in it.
# Pyodide is several times slower than CPython, and CI runs it beside other work: hypothesis must
# not judge data generation by CPython's clock there (its examples are the same either way).
PYTEST = """
import sys, pytest
from hypothesis import HealthCheck, settings
settings.register_profile("pyodide", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("pyodide")
code = pytest.main([
    "/work/tests/library", "-q", "-p", "no:cacheprovider", "--rootdir=/work",
    "--ignore=/work/tests/library/test_pyodide_safety.py",
])
int(code)
"""


def test_wheels(folder: Path) -> list[Path]:
    """Pure-Python wheels for pytest and hypothesis, fetched from PyPI once.

    Only ``py3-none-any`` wheels work in Pyodide; recent hypothesis releases also ship compiled
    ones, so pip is told to take the newest pure wheel of each.
    """
    folder.mkdir(parents=True, exist_ok=True)
    pure = sorted(folder.glob("*-none-any.whl"))
    have = {wheel.name.split("-")[0].lower() for wheel in pure}
    if not set(TEST_WHEELS) <= have:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--platform=any",
                "--implementation=py",
                "--python-version=3.12",
                "--dest",
                str(folder),
                *TEST_WHEELS,
            ],
            check=True,
        )
        pure = sorted(folder.glob("*-none-any.whl"))
    return pure


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "pyodide-packages")
    parser.add_argument(
        "--pyodide-dir", type=Path, help="an unpacked Pyodide release (core and numpy) to use"
    )
    args = parser.parse_args()
    core = None
    if args.pyodide_dir is not None:
        release = Release.open(args.pyodide_dir.resolve())
        core = args.cache = release.path
        lock = Lock.read(core, version=release.version)
    else:
        lock = Lock.read(core_dir())
    absent = missing(["numpy"], args.cache, lock)
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
        core=core,
    )
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.returncode


if __name__ == "__main__":
    raise SystemExit(main())
