"""The service worker (``/sw.js``): cross-origin isolation where the host cannot send it, and the
whole course kept offline once opened.

The worker's code is ``static/js/sw/sw.js`` (built like every asset); the script served at the
site's base path is that code after one line of JSON, :func:`course_config`: the course's version,
its pages (fetched from the network first, the cached copy when that fails) and its files (content
hashed or versioned, so cached once and served from the cache), plus the headers the server sends,
which the worker adds where a static host did not. A new version is a new script, so browsers
install it, and it replaces the cached course as a whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from fastapi import APIRouter, Request
from fastapi.responses import Response

from promptdojo import __version__
from promptdojo.web.headers import READ_METHODS, SECURITY_HEADERS
from promptdojo.web.pyodide_files import BUNDLE_URL, PACKAGES_URL, SNAPSHOT_URL
from promptdojo.web.site import Site, site_of

if TYPE_CHECKING:
    from promptdojo.pyodide.snapshot import Snapshot

SERVICE_WORKER_URL = "/sw.js"
_SOURCE_MAP = "//# sourceMappingURL="
#: Built assets no page of the course loads offline: live reload, and the worker itself.
_NOT_CACHED = {"live.js", "sw.js"}

router = APIRouter()


class CourseConfig(TypedDict):
    """The service worker's course (its JavaScript side: ``CourseConfig`` in
    ``static/js/shared/contract.js``)."""

    version: str
    pages: list[str]
    files: list[str]
    twins: dict[str, list[str]]
    headers: dict[str, str]


def course_config(
    version: str,
    pages: Iterable[str],
    files: Iterable[str],
    twins: dict[str, list[str]] | None = None,
) -> CourseConfig:
    """What the service worker knows of the course: URLs are the public ones, with the base.

    ``twins`` (an export's, :mod:`promptdojo.web.twins`): a file asked for by URL is answered
    from its compressed twin, decoded.
    """
    return CourseConfig(
        version=version,
        pages=sorted(set(pages)),
        files=sorted(set(files)),
        twins=twins or {},
        headers={name.decode(): value.decode() for name, value in SECURITY_HEADERS},
    )


def service_worker_script(built: Path, config: CourseConfig) -> bytes:
    """The script served as ``sw.js``: the course config, then the built worker code."""
    code = "\n".join(
        line
        for line in built.read_text(encoding="utf-8").splitlines()
        if not line.startswith(_SOURCE_MAP)
    )
    head = "self.promptdojoCourse = " + json.dumps(config, sort_keys=True, separators=(",", ":"))
    return (head + ";\n" + code + "\n").encode("utf-8")


def course_urls(site: Site) -> tuple[list[str], list[str]]:
    """The served course's pages and files, as the page names them (with the base)."""
    urls = site.urls
    catalog = site.catalog
    pages = [urls.base]
    packages: set[str] = set()
    # The snapshots the lessons' pages restore (a course all of numpy never needs the plain one).
    snapshots: dict[str, Snapshot] = {}
    for lesson in catalog.lessons.values():
        pages += [urls.step(lesson.id, step.number) for step in lesson.steps]
        packages.update(lesson.packages)
        restored = site.snapshot_for(lesson.packages, site.packages.on_hand(lesson.packages))
        if restored is not None:
            snapshots[restored.filename] = restored
    manifest = site.manifest
    files = [urls.of(manifest.url(name)) for name in manifest.files if name not in _NOT_CACHED]
    files += [urls.of(site.pyodide_url) + name for name in site.pyodide_files()]
    files.append(urls.of(f"{BUNDLE_URL}/{site.bundle.filename}"))
    for snapshot in snapshots.values():
        files += [urls.of(f"{SNAPSHOT_URL}/{name}") for name in snapshot.served()]
    files += [
        urls.of(f"{PACKAGES_URL}/{entry['file_name']}") for entry in site.packages.on_hand(packages)
    ]
    files += [urls.of(served.url) for served in site.compiled.values()]
    return pages, list(dict.fromkeys(files))  # the snapshots share their standard library


def _served_version(site: Site, pages: list[str], files: list[str]) -> str:
    """The served course's version: its URLs and every lesson file (pages change with them)."""
    digest = hashlib.sha256(json.dumps([__version__, pages, files]).encode())
    for lesson in sorted(site.catalog.lessons.values(), key=lambda lesson: lesson.id):
        for path in sorted(p for p in Path(lesson.path).rglob("*") if p.is_file()):
            digest.update(path.relative_to(lesson.path).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@router.api_route(SERVICE_WORKER_URL, methods=READ_METHODS, include_in_schema=False)
async def service_worker(request: Request) -> Response:
    """The service worker for the served course; made once per catalog (a reload makes anew)."""
    site = site_of(request)
    made = site.service_worker
    if made is None or made[0] is not site.catalog:
        pages, files = course_urls(site)
        config = course_config(_served_version(site, pages, files), pages, files)
        built = site.manifest.root / site.manifest.files["sw.js"]
        made = site.service_worker = (site.catalog, service_worker_script(built, config))
    return Response(made[1], media_type="text/javascript", headers={"cache-control": "no-cache"})
