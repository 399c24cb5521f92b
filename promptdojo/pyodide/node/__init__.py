"""Run Python in real Pyodide under Node, booted by the browser worker's own ``boot.js``.

Two Node scripts ship next to this module, in the wheel as in a checkout:

* ``run.mjs`` runs a Python script and exits with its value (:func:`run_python`);
* ``check.mjs`` runs a Python script in a worker thread and enforces time limits by the page's
  own stop rule (``static/js/shared/stopper.js``, which ``boot.js`` re-exports): SIGINT into the
  interrupt buffer, then, after a grace period (and a wind-down for a cell that took it),
  terminating the worker.

Both load the browser worker's ``boot.js`` from the path the job names (:func:`boot_module`), as
the front-end build bundles it for Node. Packages (numpy) come only from the package
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

from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.dist import PyodideUnavailableError, build_dir, core_dir

#: Exit status when a package the code needs is not in the package cache.
NOT_RUN = 3
HERE = Path(__file__).resolve().parent
RUNNER = HERE / "run.mjs"
CHECKER = HERE / "check.mjs"


def boot_module() -> Path:
    """``boot.js`` bundled for Node by the front-end build (``node/boot.mjs``)."""
    boot = build_dir() / "node" / "boot.mjs"
    if not boot.is_file():
        raise PyodideUnavailableError(f"{boot} is missing: build the front end (`make build`)")
    return boot


def node() -> str:
    """The ``node`` executable; raise :class:`PyodideUnavailableError` if there is none."""
    found = shutil.which("node")
    if found is None:
        raise PyodideUnavailableError("node is not installed: install Node >= 20")
    return found


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
    executable = node()
    with tempfile.TemporaryDirectory(prefix="promptdojo-pyodide-") as tmp:
        bundle = Path(tmp) / "bundle.zip"
        bundle.write_bytes(build_bundle().data)
        job = {
            "boot": str(boot_module()),
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
            [executable, str(RUNNER), str(job_file)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    return PyodideRun(done.returncode, done.stdout, done.stderr)
