"""The application factory: ``create_app(settings)`` wires pages, assets and the kernel's files."""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import mimetypes
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from promptdojo import __version__
from promptdojo.course.links import rewrite_links
from promptdojo.course.parse import ParseCache
from promptdojo.kernel import HTML_FRAME_HEAD, figure_words, shown_as
from promptdojo.pyodide.bundle import LearnerBundle
from promptdojo.pyodide.compressed import folder_copies
from promptdojo.pyodide.dist import build_dir
from promptdojo.pyodide.lock import Lock
from promptdojo.pyodide.release import COMMON_FILES, LOADERS, RELEASE_URL, Release
from promptdojo.pyodide.snapshot import (
    Snapshot,
    SnapshotError,
    checked_snapshot,
    snapshot_packages,
)
from promptdojo.web import offline, pages, pyodide_files, reference
from promptdojo.web.assets import ASSETS_URL, AssetManifest
from promptdojo.web.catalog import Catalog
from promptdojo.web.compiled import compiled_wheels, learner_bundles
from promptdojo.web.headers import (
    NO_STORE,
    READ_METHODS,
    SECURITY_HEADERS,
    SecurityHeadersMiddleware,
)
from promptdojo.web.isolation import ISOLATION_SCRIPT
from promptdojo.web.live import LiveReload
from promptdojo.web.package_store import PackageStore
from promptdojo.web.resources import templates_dir
from promptdojo.web.settings import Settings
from promptdojo.web.site import Site
from promptdojo.web.staticfiles import ImmutableStaticFiles
from promptdojo.web.twins import export_twins
from promptdojo.web.urls import Urls

# Browsers refuse to stream-compile wasm or import modules served with the wrong type.
mimetypes.add_type("application/wasm", ".wasm")
mimetypes.add_type("text/javascript", ".mjs")
mimetypes.add_type("text/javascript", ".js")

log = logging.getLogger("promptdojo.web")
SECURITY_HEADERS_TEXT = [(k.decode(), v.decode()) for k, v in SECURITY_HEADERS]


def _snapshot(settings: Settings, core: Path, bundle: LearnerBundle) -> Snapshot | None:
    """The memory snapshot pages restore, made now if needed; ``None`` means cold boots."""
    if settings.snapshot_cache_dir is None:
        return None
    try:
        snapshot = checked_snapshot(core, bundle, settings.snapshot_cache_dir, log.warning)
    except SnapshotError as exc:
        log.warning("%s; pages will boot Python without a snapshot", exc)
        return None
    log.info("memory snapshot %s", snapshot.describe())
    return snapshot


def _packaged_snapshot(
    settings: Settings, core: Path, bundle: LearnerBundle, packages: PackageStore, catalog: Catalog
) -> Snapshot | None:
    """The memory snapshot with the course's packages in it (numpy, its wheels on hand), which
    restores with them imported; ``None`` without one (pages restore the plain snapshot and
    install the packages after it)."""
    if settings.snapshot_cache_dir is None or not settings.snapshot_packages:
        return None
    declared = catalog.declared_packages()
    wheels = packages.on_hand_paths(declared) if declared else []
    if not wheels:
        return None
    try:
        held = snapshot_packages(core, wheels)
        snapshot = checked_snapshot(
            core, bundle, settings.snapshot_cache_dir, log.warning, packages=held
        )
    except SnapshotError as exc:
        log.warning("%s; pages will install the lessons' packages after the restore", exc)
        return None
    log.info("memory snapshot with %s: %s", ", ".join(declared), snapshot.describe())
    return snapshot


def _mount_files(
    app: FastAPI, manifest: AssetManifest, release: Release | None, cache: Path | None
) -> None:
    """The assets, and Pyodide (the built-in core among them, or a release of its own), with
    Pyodide's big files sent compressed, zstd first: copies made once per file in ``cache``
    (without one, the built-in core's brotli and gzip copies from the front-end build)."""
    core = release.path if release is not None else manifest.pyodide_dir
    names = [*COMMON_FILES, *LOADERS]
    copies = folder_copies(core, names, cache) if cache is not None else None
    if release is not None:
        app.mount(ASSETS_URL, ImmutableStaticFiles(directory=manifest.root), name="assets")
        app.mount(
            release.url.rstrip("/"),
            ImmutableStaticFiles(directory=release.path, copies=copies),
            name="pyodide",
        )
        return
    below = core.relative_to(manifest.root).as_posix()
    by_path = {f"{below}/{name}": found for name, found in (copies or {}).items()}
    app.mount(
        ASSETS_URL, ImmutableStaticFiles(directory=manifest.root, copies=by_path), name="assets"
    )


def in_folder(folder: Path, text: object) -> str:
    """``text`` with every path inside ``folder`` written relative to it (``x/01-a.md:3``)."""
    text = str(text)
    for prefix in {str(folder.resolve()), str(folder.absolute()), str(folder)}:
        if prefix not in ("", "."):
            text = text.replace(prefix.rstrip("/") + "/", "")
    return text


def _out_of_collection() -> None:
    """Take what is alive now, the parsed course above all, out of the cycle collector's sight.

    A 300-lesson course is hundreds of thousands of objects; every full collection walked them
    all, a tenth of a second in which no request was answered (the slowest page of a hundred).
    Lessons, records and pages hold no reference cycles: those a reload replaces are still
    freed, by reference counting. What is garbage already is collected first.
    """
    gc.collect()
    gc.freeze()


def _templates(
    settings: Settings, manifest: AssetManifest, urls: Urls, dev: bool
) -> Jinja2Templates:
    """The pages' templates, with the globals and filters every page reads."""
    templates = Jinja2Templates(directory=str(templates_dir()))
    templates.env.globals.update(
        asset=lambda name: urls.of(manifest.url(name)),
        base=urls.base,
        step_url=urls.step,
        version=__version__,
        dev=dev,
        live_reload=settings.reload,
        # The one output rule (promptdojo.kernel), for recorded outputs.
        shown_as=shown_as,
        figure_words=figure_words,
        html_frame_head=HTML_FRAME_HEAD,
        isolation_script=ISOLATION_SCRIPT,
        service_worker_url=urls.of(offline.SERVICE_WORKER_URL),
    )
    # A diagnostic names files as the lessons folder was given; the page names them inside it,
    # so no path of the server's machine reaches a page.
    templates.env.filters["in_lessons"] = functools.partial(in_folder, Path(settings.lessons_dir))
    return templates


def _course_links(site: Site) -> None:
    """Course links in prose (``lesson:ID/N#cell``) as URLs below the base, each cell id
    looked up in the site's catalog as it is then (promptdojo.course.links)."""

    def cells_of(lesson_id: str, number: int) -> set[str]:
        lesson = site.catalog.lesson(lesson_id, site.dev)
        step = lesson.step(number) if lesson is not None else None
        return {cell.id for cell in step.cells} if step is not None else set()

    filters = site.templates.env.filters
    filters["course_links"] = lambda text: rewrite_links(text, site.urls.step, cells_of)


def build_site(settings: Settings, parsed: ParseCache | None = None) -> Site:
    """The site for ``settings``: its assets, the Pyodide pages run (the built-in core, or an
    unpacked release: ``--pyodide-dir``), its packages, the lessons (``parsed``: what each
    file was parsed into, kept for reloads), the learner bundle and the memory snapshot."""
    manifest = AssetManifest.load(Path(settings.assets_dir or build_dir()))
    dev = settings.dev or settings.reload
    urls = Urls(settings.base_url, settings.static_site)
    release = Release.open(Path(settings.pyodide_dir)) if settings.pyodide_dir else None
    if release is not None:
        lock = Lock.read(release.path, version=release.version)
    else:
        lock = Lock.read(manifest.pyodide_dir)
    upstream = settings.package_upstream
    packages = PackageStore(
        lock=lock,
        cache_dir=settings.package_cache_dir,
        upstream=upstream.format(version=lock.version) if upstream else None,
        release_dir=release.path if release is not None else None,
    )
    catalog = Catalog.load(
        Path(settings.lessons_dir), lock, parsed, parsed_dir=settings.parsed_cache_dir
    )
    _out_of_collection()
    core = release.path if release is not None else manifest.pyodide_dir
    plain, bundle = learner_bundles(settings, core)
    site = Site(
        settings=settings,
        dev=dev,
        urls=urls,
        manifest=manifest,
        templates=_templates(settings, manifest, urls, dev),
        pyodide_url=release.url if release is not None else manifest.pyodide_url,
        core_dir=core,
        packages=packages,
        catalog=catalog,
        bundle=bundle,
        reference=reference.Reference(),
        snapshot=_snapshot(settings, core, plain),
        packaged_snapshot=_packaged_snapshot(settings, core, plain, packages, catalog),
        release=release,
    )
    _course_links(site)
    # The lesson's wheels with their modules' bytecode, beside the snapshot (web.compiled).
    site.compiled = compiled_wheels(settings, core, site)
    # The export's compressed twins, which its pages decode themselves (web.twins).
    if settings.static_site and settings.compressed_cache_dir is not None:
        site.twins = export_twins(site, settings.compressed_cache_dir)
    return site


def _live_reload(app: FastAPI, site: Site, parsed: ParseCache) -> LiveReload:
    """Under ``--reload``: a changed lesson file is read again (that file only), the pages
    switch to the new catalog whole, and ``/_live`` tells open pages to reload."""
    lessons_dir = Path(site.settings.lessons_dir)

    def reload_catalog(changed: set[Path]) -> None:
        """In a worker thread: re-read what changed; pages switch to the new catalog whole."""
        parsed.forget(changed)
        previous = site.catalog
        lock = site.packages.lock
        site.catalog = Catalog.load(lessons_dir, lock, parsed, previous, changed)

    live = LiveReload(lessons_dir, reload_catalog)

    @app.get("/_live", include_in_schema=False)
    async def live_events(request: Request) -> StreamingResponse:
        return StreamingResponse(
            live.events(request),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    return live


def _error_pages(app: FastAPI, templates: Jinja2Templates) -> None:
    """How errors are answered: JSON to machines, plain text to curl, a page to browsers."""

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        accept = request.headers.get("accept", "")
        machine = request.url.path.startswith(
            (
                ASSETS_URL,
                RELEASE_URL,
                pyodide_files.PACKAGES_URL,
                pyodide_files.BUNDLE_URL,
                pyodide_files.SNAPSHOT_URL,
            )
        )
        status, headers = exc.status_code, exc.headers  # e.g. a 503's retry-after
        if machine or "application/json" in accept:
            return JSONResponse({"detail": exc.detail}, status_code=status, headers=headers)
        if "text/html" not in accept:  # curl and friends: the same words, as plain text
            return PlainTextResponse(f"{exc.detail}\n", status_code=status, headers=headers)
        return templates.TemplateResponse(
            request,
            "error.html",
            {"status": status, "detail": exc.detail},
            status_code=status,
            headers=headers,
        )

    @app.exception_handler(pages.BrokenLessonError)
    async def broken_lesson(request: Request, exc: pages.BrokenLessonError) -> Response:
        return templates.TemplateResponse(
            request,
            "lesson_errors.html",
            {"folder": exc.folder, "diagnostics": exc.diagnostics},
            status_code=500,
            headers={"cache-control": "no-cache"},
        )

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        # Sent outside the middleware above (Starlette's error handler is the outermost layer).
        headers = {"cache-control": NO_STORE, **dict(SECURITY_HEADERS_TEXT)}
        return PlainTextResponse("Internal Server Error\n", status_code=500, headers=headers)


def create_app(settings: Settings) -> FastAPI:
    """Build the ASGI app for ``settings``; fails fast, with a fix, if assets are missing."""
    # Under --reload, what each file was parsed into is kept: a change re-reads that file only.
    parsed = ParseCache() if settings.reload else None
    site = build_site(settings, parsed)
    live: LiveReload | None = None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(live.watch()) if live is not None else None
        yield
        if live is not None and task is not None:
            await live.stop()
            await task

    app = FastAPI(
        title="promptdojo", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.site = site
    if parsed is not None:
        live = _live_reload(app, site, parsed)
    app.add_middleware(SecurityHeadersMiddleware)
    app.include_router(pages.router)
    app.include_router(pyodide_files.router)
    app.include_router(offline.router)
    app.include_router(reference.router)
    _mount_files(app, site.manifest, site.release, settings.compressed_cache_dir)
    _error_pages(app, site.templates)

    @app.api_route("/healthz", methods=READ_METHODS, include_in_schema=False)
    async def healthz() -> HTMLResponse:
        return HTMLResponse("ok")

    return app
