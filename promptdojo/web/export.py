"""``promptdojo export``: the course as a static site that any host or CDN can serve.

Pages are rendered by the server's own app (its routes, templates and caches, through an
in-process client), with every URL below the base path and each step named as a folder. Beside
them go the files the pages fetch, each under the name the server gives it: the hashed assets,
the Pyodide core, the learner bundle, the memory snapshot, and the wheels of every package the
lessons declare, checked against the lock. Then the service worker, with the course's version
(a hash of every byte above), and the ``_headers`` file. The same input gives the same bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import os
import shutil
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from fastapi import FastAPI

from promptdojo.course.bulk import DEFAULT_PARSED_CACHE
from promptdojo.pyodide.cache import sha256_of
from promptdojo.pyodide.lock import PackageError
from promptdojo.web.app import create_app
from promptdojo.web.offline import course_config, service_worker_script
from promptdojo.web.pyodide_files import BUNDLE_URL, PACKAGES_URL, SNAPSHOT_URL
from promptdojo.web.reference import REFERENCE_URL
from promptdojo.web.search import SEARCH_URL
from promptdojo.web.settings import Settings
from promptdojo.web.site import site_of_app
from promptdojo.web.static_host import headers_file
from promptdojo.web.twins import twins_config
from promptdojo.web.urls import normalise_base

#: Written into every export; a non-empty folder without it is never overwritten.
MARKER = ".promptdojo-export"
#: Served by GitHub Pages as they are (no Jekyll run that would drop ``_headers``).
NOJEKYLL = ".nojekyll"


class ExportError(RuntimeError):
    """The export cannot be made; the message says why and what to do."""


@dataclass(frozen=True)
class ExportResult:
    """What was written: the folder, the course version, and the number and size of files."""

    out: Path
    version: str
    files: int
    size: int


def _fail_on_broken(app: FastAPI) -> None:
    catalog = site_of_app(app).catalog
    lines = [str(d) for diagnostics in catalog.broken.values() for d in diagnostics]
    lines += [str(d) for d in catalog.course_problems]
    if lines:
        raise ExportError("a course with errors cannot be exported:\n" + "\n".join(lines))


def _select(app: FastAPI, wanted: Iterable[str]) -> None:
    """Keep only the lessons ``wanted`` (ids or folder names); none given keeps them all."""
    wanted = [Path(w).name for w in wanted]
    if not wanted:
        return
    lessons = site_of_app(app).catalog.lessons
    unknown = [w for w in wanted if w not in lessons]
    if unknown:
        raise ExportError(
            f"no lesson called {', '.join(unknown)}; the lessons are: {', '.join(sorted(lessons))}"
        )
    for lesson_id in list(lessons):
        if lesson_id not in wanted:
            del lessons[lesson_id]
    folders = site_of_app(app).catalog.folders
    for lesson_id in list(folders):
        if lesson_id not in wanted:
            del folders[lesson_id]


def _wheels(app: FastAPI) -> dict[str, Path]:
    """Every wheel the lessons need (with dependencies), checked against the lock's sha256."""
    store = site_of_app(app).packages
    declared = site_of_app(app).catalog.declared_packages()
    try:
        names = store.lock.with_dependencies(declared)
    except PackageError as exc:
        raise ExportError(str(exc)) from None
    found: dict[str, Path] = {}
    missing = []
    for name in names:
        entry = store.lock.packages[name]
        candidates = [store.release_dir, store.cache_dir]
        for folder in (c for c in candidates if c is not None):
            path = folder / entry["file_name"]
            if path.is_file() and sha256_of(path) == entry["sha256"]:
                found[entry["file_name"]] = path
                break
        else:
            missing.append(name)
    if missing:
        raise ExportError(
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not in the package cache "
            f"{store.cache_dir} with the sha256 of pyodide-lock.json. Run `promptdojo pyodide "
            f"fetch {' '.join(missing)}` (or pass --pyodide-dir with a release that holds "
            f"{'it' if len(missing) == 1 else 'them'}), then export again."
        )
    return found


async def _get(app: FastAPI, path: str) -> tuple[int, bytes]:
    """GET ``path`` from ``app`` in process, as a browser asking for a page would."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"export"), (b"accept", b"text/html")],
        "client": ("127.0.0.1", 0),
        "server": ("export", 80),
    }
    status, body = 0, bytearray()

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            body.extend(message.get("body", b""))

    await app(scope, receive, send)
    return status, bytes(body)


def _pages(app: FastAPI) -> dict[str, bytes]:
    """Every page, rendered by the app's own routes, by its path in the export."""
    urls = site_of_app(app).urls
    wanted = {
        "index.html": ("/", 200),
        "404.html": ("/404.html", 404),
        SEARCH_URL.lstrip("/"): (SEARCH_URL, 200),
    }
    lessons = sorted(site_of_app(app).catalog.lessons.values(), key=lambda lesson: lesson.id)
    for lesson in lessons:
        for step in lesson.steps:
            path = f"/lessons/{lesson.id}/{step.number}"
            wanted[f"{path.lstrip('/')}/index.html"] = (path, 200)

    async def render_all() -> dict[str, bytes]:
        pages = {}
        for name, (url, status) in wanted.items():
            answered, body = await _get(app, url)
            if answered != status:
                raise ExportError(f"rendering {url} answered HTTP {answered}: {body[:200]!r}")
            pages[name] = body
        return pages

    # In a thread of its own: the caller may be running an event loop already.
    with ThreadPoolExecutor(1) as pool:
        pages = pool.submit(asyncio.run, render_all()).result()
    for lesson in lessons:
        # Escaped although the base and the id are plain paths already (normalise_base, SLUG).
        first = html.escape(urls.step(lesson.id, 1), quote=True)
        pages[f"lessons/{lesson.id}/index.html"] = (
            f'<!doctype html><meta charset="utf-8"><title>{html.escape(lesson.title)}</title>'
            f'<meta http-equiv="refresh" content="0; url={first}"><a href="{first}">Start</a>\n'
        ).encode()
    return pages


def _files(app: FastAPI) -> dict[str, Path | bytes]:
    """Every file the pages fetch, by its path in the export (its URL below the base)."""
    site = site_of_app(app)
    manifest = site.manifest
    files: dict[str, Path | bytes] = {}
    for name, built in manifest.files.items():
        if name in ("live.js", "sw.js"):  # live reload is the server's; sw.js is written below
            continue
        files[manifest.url(name).lstrip("/")] = manifest.root / built
        source_map = manifest.root / (built + ".map")
        if source_map.is_file():
            files[manifest.url(name).lstrip("/") + ".map"] = source_map
    core = Path(site.core_dir)
    for name in site.pyodide_files():
        files[site.pyodide_url.lstrip("/") + name] = core / name
    files[f"{BUNDLE_URL}/{site.bundle.filename}".lstrip("/")] = site.bundle.data
    for snapshot in site.snapshots():
        for name, path in snapshot.served().items():  # with its standard library
            files[f"{SNAPSHOT_URL}/{name}".lstrip("/")] = path
    for file_name, path in _wheels(app).items():
        files[f"{PACKAGES_URL}/{file_name}".lstrip("/")] = path
    for served in site.compiled.values():
        files[served.url.lstrip("/")] = served.compiled.path
    for twin in site.twins.values():
        files[twin.url.lstrip("/")] = twin.source
    for path, data in site.reference.files().items():
        files[f"{REFERENCE_URL}/{path}".lstrip("/")] = data
    return files


def _bytes(source: Path | bytes) -> bytes:
    return source if isinstance(source, bytes) else source.read_bytes()


def _version(contents: dict[str, Path | bytes]) -> str:
    digest = hashlib.sha256()
    for path in sorted(contents):
        data = _bytes(contents[path])
        digest.update(f"{path}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def _write(folder: Path, contents: dict[str, Path | bytes]) -> int:
    size = 0
    for path in sorted(contents):
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        source = contents[path]
        if isinstance(source, bytes):
            target.write_bytes(source)
        else:
            shutil.copyfile(source, target)
        size += target.stat().st_size
    return size


def _check_out(out: Path) -> None:
    """Refuse a file, or a folder holding anything but an earlier export."""
    if out.exists():
        if not out.is_dir():
            raise ExportError(f"{out} is a file; export into a folder")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise ExportError(
                f"{out} is not empty and holds no earlier export: choose an empty or new folder"
            )


def _replace(out: Path, staged: Path) -> None:
    """Put ``staged`` where ``out`` is; a previous export there is replaced as a whole."""
    _check_out(out)
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=".old-", dir=out.parent))
        os.replace(out, old / "out")
        os.replace(staged, out)
        shutil.rmtree(old)
    else:
        os.replace(staged, out)


def export_site(
    settings: Settings, out: Path, lessons: Iterable[str] = (), base_url: str = "/"
) -> ExportResult:
    """Write the static site for ``settings``'s lessons (or only ``lessons``) into ``out``."""
    base = normalise_base(base_url)
    out = out.resolve()
    _check_out(out)
    settings = replace(settings, base_url=base, static_site=True, package_upstream=None)
    if settings.parsed_cache_dir is None:  # what `validate` read, if it ran before
        settings = replace(settings, parsed_cache_dir=DEFAULT_PARSED_CACHE.resolve())
    app = create_app(settings)
    _fail_on_broken(app)
    _select(app, lessons)
    if not site_of_app(app).catalog.lessons:
        raise ExportError(f"no lessons in {settings.lessons_dir} to export")
    contents: dict[str, Path | bytes] = {**_files(app), **_pages(app)}
    version = _version(contents)
    urls = site_of_app(app).urls
    pages = [urls.of(p.removesuffix("index.html")) for p in contents if p.endswith("index.html")]
    # The offline copy keeps what the pages fetch: a file's twin where it has one.
    twinned = {path.lstrip("/") for path in site_of_app(app).twins}
    files = [urls.of(p) for p in contents if not p.endswith((".html", ".map")) and p not in twinned]
    twins = twins_config(site_of_app(app).twins, urls.of)
    built = site_of_app(app).manifest.root / site_of_app(app).manifest.files["sw.js"]
    contents["sw.js"] = service_worker_script(built, course_config(version, pages, files, twins))
    contents["_headers"] = headers_file(base, contents).encode()
    contents[NOJEKYLL] = b""
    contents[MARKER] = f"promptdojo export, version {version}\n".encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    staged.chmod(0o755)  # as any folder made by hand, not mkdtemp's private 0700
    try:
        size = _write(staged, contents)
        _replace(out, staged)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return ExportResult(out=out, version=version, files=len(contents), size=size)
