"""Server settings: one frozen object handed to :func:`promptdojo.web.create_app`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to know, resolved once at start-up."""

    #: Folder holding one sub-folder per lesson.
    lessons_dir: Path
    #: Development mode: authors see a broken lesson's errors instead of a missing lesson.
    dev: bool = False
    #: Watch the lessons folder and refresh open pages when a file changes (implies ``dev``).
    reload: bool = False
    #: Folder of cached Pyodide packages (wheels named in pyodide-lock.json).
    package_cache_dir: Path | None = None
    #: Where a package missing from the cache is fetched from (``None``: never fetch); a
    #: ``{version}`` in it becomes the served Pyodide's version.
    package_upstream: str | None = None
    #: An unpacked full Pyodide release to serve instead of the built-in core (offline classes).
    pyodide_dir: Path | None = None
    #: Where memory snapshots are kept and made (``None``: no snapshot; every page boots cold).
    snapshot_cache_dir: Path | None = None
    #: Make a second snapshot with the lessons' packages imported (numpy), which their pages
    #: restore instead; ``False``: they restore the plain one and install the packages after it.
    snapshot_packages: bool = True
    #: Where compressed copies of an unpacked release's files are kept (``None``: sent as they
    #: are); the export's compressed copies come from here too.
    compressed_cache_dir: Path | None = None
    #: Where what each lesson was read into is kept across runs (``validate`` keeps it there
    #: too); ``None``: read every lesson at start (promptdojo.course.bulk).
    parsed_cache_dir: Path | None = None
    #: Folder of built front-end assets; ``None`` means the copy shipped with the package.
    assets_dir: Path | None = None
    #: The path every URL in pages starts with (``/course/`` for a static export below a path).
    base_url: str = "/"
    #: Pages are rendered for a static export: steps are named as folders, nothing needs a server.
    static_site: bool = False
