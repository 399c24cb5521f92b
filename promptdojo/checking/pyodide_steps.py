"""``promptdojo check --pyodide``: the same checks, in real Pyodide under Node.

Each step runs in its own Node process (``scripts/pyodide_check.mjs``), which boots Pyodide with
the browser worker's bootstrap module and judges cells with :mod:`promptdojo.checking.steprun`.
Packages come only from the package cache; a step whose packages are missing is reported as
*not run* with the command that fetches them, never as passed.
"""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import promptdojo
from promptdojo.bundle import build_bundle
from promptdojo.checking.pyodide import PyodideUnavailableError, core_dir
from promptdojo.checking.runner import StepResult, cells_of, fill_missing, process_budget
from promptdojo.checking.serialize import step_to_dict
from promptdojo.checking.steprun import CellOutcome, Status
from promptdojo.course.model import Lesson, Step
from promptdojo.web.package_cache import Lock, missing, not_cached_message
from promptdojo.web.release import Release

RUNNER = Path(__file__).resolve().parent.parent.parent / "scripts" / "pyodide_check.mjs"
#: Pyodide boot time allowed per step, on top of the cells' own limits.
BOOT_SECONDS = 60.0


def _not_run(step: Step, message: str) -> list[CellOutcome]:
    return [
        CellOutcome(c.id, str(c.location.path), c.first_line, Status.NOT_RUN, message)
        for c in cells_of(step)
    ]


def pyodide_step_runner(
    cache_dir: Path, release: Release | None = None
) -> Callable[[Lesson, Step], StepResult]:
    """A ``run_step`` for :func:`promptdojo.checking.runner.check` that uses Pyodide.

    By default the built-in core runs, with packages from ``cache_dir``. With ``release`` (an
    unpacked Pyodide release, ``--pyodide-dir``) that release runs, with the wheels it holds.
    """
    node = shutil.which("node")
    if node is None:
        raise PyodideUnavailableError("node is not installed: install Node >= 20")
    if release is not None:
        core, cache_dir = release.path, release.path
        lock = Lock.read(core, version=release.version)
    else:
        core = core_dir()
        lock = Lock.read(core)
    bundle_dir = Path(tempfile.mkdtemp(prefix="promptdojo-bundle-"))
    atexit.register(shutil.rmtree, bundle_dir, ignore_errors=True)
    bundle = bundle_dir / "bundle.zip"
    bundle.write_bytes(build_bundle().data)
    source = str(Path(promptdojo.__file__).resolve().parent)
    cache_dir = cache_dir.resolve()

    def run(lesson: Lesson, step: Step) -> StepResult:
        started = time.perf_counter()
        absent = missing(lesson.packages, cache_dir, lock)
        if absent:
            message = not_cached_message(absent, cache_dir)
            return StepResult(lesson, step, _not_run(step, message), 0.0)
        budget = BOOT_SECONDS + process_budget(lesson, step)
        with tempfile.TemporaryDirectory(prefix="promptdojo-pyodide-") as tmp:
            job, out = Path(tmp) / "job.json", Path(tmp) / "out.json"
            job.write_text(
                json.dumps(
                    {
                        "pyodide": str(core),
                        "packageDir": str(cache_dir),
                        "packages": list(lesson.packages),
                        "bundle": str(bundle),
                        "source": source,
                        "step": step_to_dict(step),
                        "timeLimit": lesson.time_limit,
                    }
                )
            )
            why = ""
            try:
                done = subprocess.run(
                    [node, str(RUNNER), str(job), str(out)],
                    capture_output=True,
                    text=True,
                    timeout=budget,
                )
                if done.returncode != 0:
                    why = f"Node exited with {done.returncode}: {done.stderr.strip()[-300:]}"
            except subprocess.TimeoutExpired:
                why = f"the Pyodide process was killed after {budget:g} s"
            data = json.loads(out.read_text()) if out.is_file() else {}
        if data.get("missing"):
            names = sorted(data["missing"])
            return StepResult(lesson, step, _not_run(step, not_cached_message(names, cache_dir)), 0)
        outcomes = [CellOutcome.from_dict(d) for d in data.get("outcomes", [])]
        why = data.get("crashed") or why
        if len(outcomes) < len(cells_of(step)):
            outcomes = fill_missing(step, outcomes, why or "the Pyodide process ended early")
        return StepResult(lesson, step, outcomes, time.perf_counter() - started)

    return run
