"""The site a server serves, typed: what ``create_app`` builds once and every route reads.

In place of an untyped ``app.state`` bag, routes ask :func:`site_of` for the :class:`Site` and
read its fields, which a type checker and a reader can follow. It imports nothing of ``web/`` at
run time (only for its annotations), so every module of ``web/`` may import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from promptdojo.pyodide.release import COMMON_FILES, LOADERS
from promptdojo.pyodide.stdlib import STDLIB

if TYPE_CHECKING:
    from fastapi import FastAPI, Request
    from fastapi.templating import Jinja2Templates

    from promptdojo.pyodide.bundle import LearnerBundle
    from promptdojo.pyodide.release import Release
    from promptdojo.pyodide.snapshot import Snapshot
    from promptdojo.web.assets import AssetManifest
    from promptdojo.web.catalog import Catalog
    from promptdojo.web.compiled import ServedWheel
    from promptdojo.web.package_store import PackageStore
    from promptdojo.web.reference import Reference
    from promptdojo.web.settings import Settings
    from promptdojo.web.twins import Twin
    from promptdojo.web.urls import Urls


@dataclass
class Site:
    """The lessons, the assets and the kernel's files of one served (or exported) course."""

    settings: Settings
    #: Development mode (``--dev`` or ``--reload``): broken lessons show their problems.
    dev: bool
    urls: Urls
    manifest: AssetManifest
    templates: Jinja2Templates
    #: Where pages load Pyodide from (below the base), and the folder it is served from.
    pyodide_url: str
    core_dir: Path
    packages: PackageStore
    #: The lessons; under ``--reload`` replaced whole when a file changes.
    catalog: Catalog
    bundle: LearnerBundle
    reference: Reference
    #: The memory snapshot pages restore; None: they boot Python from scratch.
    snapshot: Snapshot | None = None
    #: The snapshot with the course's packages in it (numpy), which the pages of a lesson that
    #: declares them all restore instead (promptdojo.pyodide.snapshot's SnapshotPackages).
    packaged_snapshot: Snapshot | None = None
    #: The lessons' wheels compiled to bytecode, by wheel file name (web.compiled).
    compiled: dict[str, ServedWheel] = field(default_factory=dict)
    #: The export's compressed twins, by the URL of the file each stands for (web.twins).
    twins: dict[str, Twin] = field(default_factory=dict)
    #: The unpacked Pyodide release pages run (``--pyodide-dir``); None: the built-in core.
    release: Release | None = None
    #: The service worker's script and the catalog it was made for (web.offline).
    service_worker: tuple[Catalog, bytes] | None = None

    def snapshots(self) -> list[Snapshot]:
        """The memory snapshots pages restore (each with its standard library)."""
        return [s for s in (self.snapshot, self.packaged_snapshot) if s is not None]

    def snapshot_for(self, packages: Iterable[str], wheels: list[dict]) -> Snapshot | None:
        """The snapshot the pages of a lesson that declares ``packages`` restore, given the
        wheels on hand for them (``wheels``)."""
        return snapshot_for(self.snapshot, self.packaged_snapshot, packages, wheels)

    def pyodide_files(self) -> list[str]:
        """The names of Pyodide's own files pages may fetch, from its folder: with a snapshot,
        not its standard library (pages load the one the snapshot was made with)."""
        unused = {STDLIB} if self.snapshot is not None else set()
        core = Path(self.core_dir)
        return [
            name
            for name in (*COMMON_FILES, *LOADERS)
            if name not in unused and (core / name).is_file()
        ]


def snapshot_for(
    plain: Snapshot | None, packaged: Snapshot | None, packages: Iterable[str], wheels: list[dict]
) -> Snapshot | None:
    """The snapshot the pages of a lesson that declares ``packages`` restore, given the wheels on
    hand for them (lock entries, in install order): ``packaged`` when every package has its wheel
    and they are exactly the wheels it holds, with the same contents; else ``plain`` (a page then
    installs its packages after the restore)."""
    if packaged is None or packaged.packages is None or not wheels:
        return plain
    names = {entry["name"] for entry in wheels}
    held = [list(pair) for pair in packaged.packages["wheels"]]
    if set(packages) <= names and held == [[w["file_name"], w["sha256"]] for w in wheels]:
        return packaged
    return plain


def site_of(request: Request) -> Site:
    """The site ``request`` reached."""
    return request.app.state.site


def site_of_app(app: FastAPI) -> Site:
    """The site ``app`` serves."""
    return app.state.site
