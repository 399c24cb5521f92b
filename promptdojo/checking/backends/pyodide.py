"""The Pyodide backend (``check --pyodide``): the same checks, in real Pyodide under Node.

Each step runs in its own Node process (``check.mjs`` of :mod:`promptdojo.pyodide.node`), which
boots Pyodide with the browser worker's bootstrap module and runs :mod:`.pyodide_step` there.
Packages come only from the package cache; a step whose packages are missing is reported as
*not run* with the command that fetches them, never as passed.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any, TypedDict

import promptdojo
from promptdojo.checking.backends import Backend
from promptdojo.checking.backends.cpython import MB, memory_limit
from promptdojo.checking.backends.process import complete, process_budget, run_job
from promptdojo.checking.environment import cell_environment
from promptdojo.checking.limits import NODE_HEAP_MB
from promptdojo.checking.outcome import CellOutcome, Status, StepResult, cells_of
from promptdojo.checking.serialize import step_to_dict
from promptdojo.course.model import Lesson, Step
from promptdojo.pyodide.bundle import build_bundle
from promptdojo.pyodide.cache import missing, not_cached_message
from promptdojo.pyodide.dist import core_dir
from promptdojo.pyodide.limits import STOP_GRACE_SECONDS, STOP_WIND_DOWN_SECONDS
from promptdojo.pyodide.lock import Lock
from promptdojo.pyodide.node import CHECKER, boot_module, node
from promptdojo.pyodide.release import Release
from promptdojo.pyodide.snapshot import Snapshot, ensure_snapshot

#: Pyodide boot time allowed per step, on top of the cells' own limits.
BOOT_SECONDS = 60.0
#: Megabytes of writable memory a Node process needs besides Pyodide's and its V8 heap.
NODE_MARGIN_MB = 512
#: The modules that run inside Pyodide besides the learner bundle's (the Pyodide-safety test
#: checks them all), relative to the package folder.
IN_PYODIDE = (
    "checking/__init__.py",
    "checking/backends/__init__.py",
    "checking/backends/pyodide_step.py",
    "checking/capture.py",
    "checking/judge.py",
    "checking/outcome.py",
    "checking/serialize.py",
    "checking/wrong.py",
    "course/__init__.py",
    "course/model.py",
)
#: What ``check.mjs`` runs inside Pyodide: :func:`.pyodide_step.main` (it imports ``js``).
SCRIPT = "from promptdojo.checking.backends.pyodide_step import main\nmain()\n"


def _not_run(step: Step, message: str) -> list[CellOutcome]:
    return [CellOutcome.of(c, Status.NOT_RUN, message) for c in cells_of(step)]


class CheckJob(TypedDict):
    """check.mjs's ``JOB`` (its JavaScript side: ``CheckJob`` in static/js/shared/contract.js)."""

    boot: str
    pyodide: str
    packageDir: str
    bundle: str
    source: str
    script: str
    graceMs: float
    windDownMs: float
    snapshot: dict[str, str] | None
    packages: list[str]
    packageWheels: list[dict[str, Any]]
    step: dict[str, Any]
    time_limit: float
    seed: int | None
    numpy: bool


def _crashed(done) -> str:
    return f"Node exited with {done.returncode}: {done.stderr.strip()[-300:]}"


def _base_job(
    core: Path, cache_dir: Path, snapshot_cache: Path | None
) -> tuple[dict[str, Any], Snapshot | None]:
    """What every step's job shares (check.mjs's JOB): the boot module, Pyodide, the package
    cache, the learner bundle (written to a folder removed at exit), the judge's script, the
    stop rule's periods and the snapshot (made in ``snapshot_cache`` when missing)."""
    bundle_dir = Path(tempfile.mkdtemp(prefix="promptdojo-bundle-"))
    atexit.register(shutil.rmtree, bundle_dir, ignore_errors=True)
    bundle = bundle_dir / "bundle.zip"
    learner_bundle = build_bundle()
    bundle.write_bytes(learner_bundle.data)
    snapshot = (
        ensure_snapshot(core, learner_bundle, snapshot_cache.resolve())
        if snapshot_cache is not None
        else None
    )
    job = {
        "boot": str(boot_module()),
        "pyodide": str(core),
        "packageDir": str(cache_dir),
        "bundle": str(bundle),
        "source": str(Path(promptdojo.__file__).resolve().parent),
        "script": SCRIPT,
        "graceMs": STOP_GRACE_SECONDS * 1000,
        "windDownMs": STOP_WIND_DOWN_SECONDS * 1000,
        "snapshot": (
            {
                "path": str(snapshot.path),
                "sha256": snapshot.sha256,
                "stdlib": str(snapshot.stdlib),
            }
            if snapshot
            else None
        ),
    }
    return job, snapshot


def step_job(
    base_job: dict[str, Any], lesson: Lesson, step: Step, lock: Lock, cache_dir: Path
) -> CheckJob:
    """The job check.mjs runs for ``step`` (its ``JOB``; ``CheckJob`` in
    ``static/js/shared/contract.js``): what every step shares, and the step's own."""
    return CheckJob(
        **base_job,
        packages=list(lesson.packages),
        packageWheels=lock.wheel_job(lesson.packages, cache_dir),
        step=step_to_dict(step),
        time_limit=lesson.time_limit,
        seed=lesson.seed,
        numpy="numpy" in lesson.packages,
    )


def pyodide_step_runner(
    cache_dir: Path,
    release: Release | None = None,
    *,
    snapshot_cache: Path | None = None,
    pass_env: Collection[str] = (),
) -> Backend:
    """A backend for :func:`promptdojo.checking.orchestrator.check` that uses Pyodide.

    By default the built-in core runs, with packages from ``cache_dir``. With ``release`` (an
    unpacked Pyodide release, ``--pyodide-dir``) that release runs, with the wheels it holds.

    With ``snapshot_cache``, every step restores the memory snapshot that pages restore (made
    there if missing), so the check proves the cells on a restored interpreter; a step whose
    restore fails fails, rather than quietly booting from scratch.

    Node sees the allowed environment only, plus the names in ``pass_env`` (a cell reads Node's
    through ``js.process.env``).
    """
    executable = node()
    if release is not None:
        core, cache_dir = release.path, release.path
        lock = Lock.read(core, version=release.version)
    else:
        core = core_dir()
        lock = Lock.read(core)
    cache_dir = cache_dir.resolve()
    base_job, snapshot = _base_job(core, cache_dir, snapshot_cache)

    def run(lesson: Lesson, step: Step) -> StepResult:
        started = time.perf_counter()
        absent = missing(lesson.packages, cache_dir, lock)
        if absent:
            message = not_cached_message(absent, cache_dir)
            return StepResult(lesson, step, _not_run(step, message), 0.0)
        job = step_job(base_job, lesson, step, lock, cache_dir)
        budget = BOOT_SECONDS + process_budget(lesson, step)
        # Node's own heap is capped, and its writable memory (Pyodide's WebAssembly memory
        # included) to the lesson's memory limit plus that heap: a cell that allocates too
        # much gets MemoryError, and the machine keeps its memory.
        writable = memory_limit(lesson) + (NODE_HEAP_MB + NODE_MARGIN_MB) * MB
        ended = run_job(
            [executable, f"--max-old-space-size={NODE_HEAP_MB}", str(CHECKER)],
            job,
            budget,
            crashed=_crashed,
            killed="the Pyodide process",
            env=cell_environment(pass_env),
            limits={"DATA": writable},
        )
        data = ended.data or {}
        if data.get("missing"):
            names = sorted(data["missing"])
            return StepResult(lesson, step, _not_run(step, not_cached_message(names, cache_dir)), 0)
        failed = (data.get("boot") or {}).get("snapshotFailed")
        if snapshot is not None and failed:
            why = f"{failed} (a page would boot from scratch; --no-snapshot does so here)"
            return StepResult(lesson, step, complete(step, [], why), 0.0)
        outcomes = [CellOutcome.from_dict(d) for d in data.get("outcomes", [])]
        why = data.get("crashed") or ended.why
        outcomes = complete(step, outcomes, why or "the Pyodide process ended early")
        return StepResult(lesson, step, outcomes, time.perf_counter() - started)

    return run
