"""Run Python in real Pyodide under Node, with packages from the server's package cache.

The Node side is ``scripts/pyodide_run.mjs``, which boots Pyodide through ``static/js/boot.js``,
the same module the browser's kernel worker uses. Packages (numpy) come only from the package
cache folder; one that is not there is reported as *not run*, never as passed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from promptdojo.bundle import build_bundle
from promptdojo.web.resources import build_dir, pyodide_core_dir

#: Exit status when a package the code needs is not in the package cache.
NOT_RUN = 3

_CHECKOUT = Path(__file__).resolve().parent.parent.parent
RUNNER = _CHECKOUT / "scripts" / "pyodide_run.mjs"


class PyodideUnavailableError(RuntimeError):
    """Node or the Pyodide core is missing; the message says how to get it."""


def core_dir() -> Path:
    """The Pyodide core the server ships (``static/build/pyodide/<version>``)."""
    core = pyodide_core_dir()
    if core is None:
        raise PyodideUnavailableError(
            f"{build_dir()} holds no Pyodide core: build the front end first (`make build`)"
        )
    return core


@dataclass(frozen=True)
class PyodideRun:
    """How a Pyodide-under-Node run ended."""

    returncode: int
    stdout: str
    stderr: str


def run_python(
    script: str,
    *,
    packages: Sequence[str] = (),
    cache_dir: Path,
    wheels: Sequence[Path] = (),
    mounts: Sequence[tuple[Path, str]] = (),
    timeout: float = 600,
    core: Path | None = None,
) -> PyodideRun:
    """Run ``script`` in Pyodide under Node; its final expression (an int) is the exit status.

    ``core`` is the Pyodide folder to boot (default: the built-in core).
    """
    node = shutil.which("node")
    if node is None:
        raise PyodideUnavailableError("node is not installed: install Node >= 20")
    if not RUNNER.is_file():
        raise PyodideUnavailableError(f"{RUNNER} is missing: run from a promptdojo checkout")
    with tempfile.TemporaryDirectory(prefix="promptdojo-pyodide-") as tmp:
        bundle = Path(tmp) / "bundle.zip"
        bundle.write_bytes(build_bundle().data)
        job = {
            "pyodide": str(core or core_dir()),
            "packageDir": str(cache_dir),
            "packages": list(packages),
            "bundle": str(bundle),
            "wheels": [str(w) for w in wheels],
            "mounts": [{"host": str(host), "target": target} for host, target in mounts],
            "script": script,
        }
        job_file = Path(tmp) / "job.json"
        job_file.write_text(json.dumps(job))
        done = subprocess.run(
            [node, str(RUNNER), str(job_file)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return PyodideRun(done.returncode, done.stdout, done.stderr)
