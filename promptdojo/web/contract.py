"""What a step page tells its scripts, typed once: the kernel config (the ``promptdojo-kernel``
meta element, read by the page, the kernel worker and the download worker) and the step data
(``#step-data``, read by the page).

Their JavaScript side is ``static/js/shared/contract.js``, whose ``KernelConfig`` and
``StepData`` typedefs name the same keys; ``tests/web/test_contract.py`` fails when the two
disagree, or when a rendered page sends a key neither names. Numbers both sides need (time
limits, the stop periods, the output cap, the control values' limits) are Python's and reach the
page only through the kernel config.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from promptdojo.course.definitions import Definition, step_definitions
from promptdojo.course.needs import needed_cells
from promptdojo.kernel import (
    FIGURE_MIME,
    HTML_FRAME_HEAD,
    MAX_CONTROL_VALUES,
    OUTPUT_CAP,
    SHOWN_FIRST,
    seed_code,
)
from promptdojo.pyodide.limits import (
    BOOT_PATIENCE_SECONDS,
    STOP_GRACE_SECONDS,
    STOP_WIND_DOWN_SECONDS,
)
from promptdojo.pyodide.lock import wheel_entry
from promptdojo.ui import MAX_TEXT
from promptdojo.web.compiled import compiled_entry
from promptdojo.web.pyodide_files import BUNDLE_URL, PACKAGES_URL, SNAPSHOT_URL
from promptdojo.web.twins import twins_config

if TYPE_CHECKING:
    from promptdojo.course import Lesson, Step
    from promptdojo.web.site import Site


class SnapshotRef(TypedDict):
    """The memory snapshot a page restores: its URL, the SHA-256 it must have and its size in
    bytes (the wheels' download starts once half of it has come, download-order.js); and the URL of
    the standard library it was made with, which Pyodide loads in place of its own. A snapshot
    with packages in it has their record (static/js/kernel/snapshot-packages.js), else null."""

    url: str
    sha256: str
    size: int
    stdlib: str
    packages: dict[str, Any] | None


class KernelConfig(TypedDict):
    """The kernel config of a lesson's step pages (the same on every step of the lesson)."""

    workerUrl: str
    downloadWorkerUrl: str
    zstdUrl: str
    pyodideUrl: str
    packagesUrl: str
    bundleUrl: str
    snapshot: SnapshotRef | None
    packages: list[str]
    wheels: list[dict[str, Any]]
    twins: dict[str, list[str]]
    earlyFiles: list[str]
    imports: dict[str, list[str]]
    lesson: str
    timeLimit: float
    stopGraceMs: float
    stopWindDownMs: float
    bootPatienceMs: float
    outputCap: int
    maxControlValues: int
    maxControlText: int
    outputOrder: list[str]
    figureMime: str
    htmlFrameHead: str


class StepData(TypedDict):
    """One step's data for the page: its hidden code, its limits and what its cells declare."""

    lesson: str
    step: int
    setup: list[dict[str, str]]
    checks: dict[str, str]
    timeLimits: dict[str, float]
    controls: dict[str, list[dict[str, Any]]]
    runEarlier: bool
    needs: dict[str, list[str]]
    definitions: dict[str, Definition]


def early_files(
    pyodide_url: str, snapshot: SnapshotRef | None, twins: dict[str, list[str]]
) -> list[str]:
    """The boot's first big downloads as the workers ask for them: Pyodide's WebAssembly, and the
    snapshot and its standard library, each through its zstd twin where it has one (twins.js).

    A page that reloads under the service worker on a first visit asks the worker to fetch these
    while it reloads (templates/_isolation.js), so the link is busy from then on. A file whose
    twin is gzip is left out: a browser without ``DecompressionStream`` asks for the file itself.
    """
    wanted = [pyodide_url + "pyodide.asm.wasm"]
    if snapshot is not None:
        wanted += [snapshot["stdlib"], snapshot["url"]]
    files = []
    for url in wanted:
        twin, coding = twins.get(url, [url, None])
        if coding in (None, "zstd"):
            files.append(twin)
    return files


def kernel_config(
    site: Site, lesson: Lesson, wheels: list[dict], imports: dict[str, list[str]]
) -> KernelConfig:
    """The kernel config of ``lesson``'s pages on ``site``: ``wheels``, the lock's entries of the
    wheels on hand for its packages in install order; ``imports``, what each step's cells import
    (the worker imports the opened step's before "ready", the other steps' after it)."""
    url = site.urls.of  # every URL below the site's base path
    found = site.snapshot_for(lesson.packages, wheels)
    snapshot = (
        SnapshotRef(
            url=url(f"{SNAPSHOT_URL}/{found.filename}"),
            sha256=found.sha256,
            size=found.size,
            stdlib=url(f"{SNAPSHOT_URL}/{found.stdlib_filename}"),
            packages=found.packages,
        )
        if found is not None
        else None
    )
    twins = twins_config(site.twins, url)
    return KernelConfig(
        workerUrl=url(site.manifest.url("worker.js")),
        # The kernel worker fetches the snapshot and the wheels through it (downloads.js).
        downloadWorkerUrl=url(site.manifest.url("download-worker.js")),
        zstdUrl=url(site.manifest.url("zstd.js")),
        pyodideUrl=url(site.pyodide_url),
        packagesUrl=url(PACKAGES_URL + "/"),
        bundleUrl=url(f"{BUNDLE_URL}/{site.bundle.filename}"),
        snapshot=snapshot,
        packages=list(lesson.packages),
        # The worker unpacks them while Python starts (wheels.js).
        wheels=[
            wheel_entry(entry, url=url(f"{PACKAGES_URL}/{entry['file_name']}"))
            | compiled_entry(site.compiled.get(entry["file_name"]), url)
            for entry in wheels
        ],
        # The export's compressed copies, which the workers fetch and decode (twins.js).
        twins=twins,
        # Fetched by the service worker as a first visit reloads (templates/_isolation.js).
        earlyFiles=early_files(url(site.pyodide_url), snapshot, twins),
        imports=imports,
        lesson=lesson.id,
        timeLimit=lesson.time_limit,
        stopGraceMs=STOP_GRACE_SECONDS * 1000,
        stopWindDownMs=STOP_WIND_DOWN_SECONDS * 1000,
        bootPatienceMs=BOOT_PATIENCE_SECONDS * 1000,
        # Characters of output one cell shows; the check keeps no more in its records.
        outputCap=OUTPUT_CAP,
        # What one run's control values may be (promptdojo.kernel.control_values).
        maxControlValues=MAX_CONTROL_VALUES,
        maxControlText=MAX_TEXT,
        outputOrder=list(SHOWN_FIRST),
        figureMime=FIGURE_MIME,
        htmlFrameHead=HTML_FRAME_HEAD,
    )


def step_data(lesson: Lesson, step: Step) -> StepData:
    """The step's data: hidden code the page runs but does not show (lesson.yaml's seed first,
    then the setup cells; the exercises' checks), each cell's time limit and controls."""
    seeding = []
    if lesson.seed is not None:  # the same numbers as the check, before the step's first cell
        code = seed_code(lesson.seed, numpy="numpy" in lesson.packages)
        seeding = [{"id": "lesson-seed", "code": code}]
    return StepData(
        lesson=lesson.id,
        step=step.number,
        setup=seeding + [{"id": c.id, "code": c.code} for c in step.setup],
        checks={e.id: e.check.code for e in step.exercises},
        timeLimits={c.id: lesson.time_limit_of(c) for c in step.cells},
        # The controls each cell declares with literal arguments: drawn before it first runs.
        controls={c.id: list(c.controls) for c in step.cells if c.controls},
        # Running a cell runs the earlier ones not yet run first; a NameError says which cell
        # defines the name (static/js/page/order.js).
        runEarlier=lesson.run_earlier_cells,
        # Of those, the ones each cell needs while the cells are as written (course/needs.py).
        needs=needed_cells(step, lesson.unchanged_by_calls),
        definitions=step_definitions(lesson, step),
    )
