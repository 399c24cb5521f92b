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
from promptdojo.pyodide.bundle import LearnerBundle, build_bundle
from promptdojo.pyodide.compressed import folder_copies
from promptdojo.pyodide.dist import build_dir
from promptdojo.pyodide.lock import Lock
from promptdojo.pyodide.release import COMMON_FILES, LOADERS, RELEASE_URL, Release
from promptdojo.pyodide.snapshot import Snapshot, SnapshotError, checked_snapshot
from promptdojo.web import offline, pages, pyodide_files, reference
from promptdojo.web.assets import ASSETS_URL, AssetManifest
from promptdojo.web.catalog import Catalog
from promptdojo.web.compiled import compiled_wheels
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


def create_app(settings: Settings) -> FastAPI:
    """Build the ASGI app for ``settings``; fails fast, with a fix, if assets are missing."""
    manifest = AssetManifest.load(Path(settings.assets_dir or build_dir()))
    templates = Jinja2Templates(directory=str(templates_dir()))
    dev = settings.dev or settings.reload
    urls = Urls(settings.base_url, settings.static_site)
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
    lessons_dir = Path(settings.lessons_dir)
    # A diagnostic names files as the lessons folder was given; the page names them inside it,
    # so no path of the server's machine reaches a page.
    templates.env.filters["in_lessons"] = functools.partial(in_folder, lessons_dir)
    live = None

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
    app.state.settings = settings

    def cells_of(lesson_id: str, number: int) -> set[str]:
        lesson = app.state.catalog.lesson(lesson_id, dev)
        step = lesson.step(number) if lesson is not None else None
        return {cell.id for cell in step.cells} if step is not None else set()

    # Course links in prose (lesson:ID/N#cell) as URLs below the base (promptdojo.course.links).
    templates.env.filters["course_links"] = lambda text: rewrite_links(text, urls.step, cells_of)
    app.state.dev = dev
    app.state.urls = urls
    app.state.manifest = manifest
    app.state.templates = templates
    # The Pyodide the browser runs: the built-in core, or an unpacked release (--pyodide-dir).
    release = Release.open(Path(settings.pyodide_dir)) if settings.pyodide_dir else None
    if release is not None:
        app.state.pyodide_url = release.url
        lock = Lock.read(release.path, version=release.version)
    else:
        app.state.pyodide_url = manifest.pyodide_url
        lock = Lock.read(manifest.pyodide_dir)
    app.state.packages = PackageStore(
        lock=lock,
        cache_dir=settings.package_cache_dir,
        upstream=(
            settings.package_upstream.format(version=lock.version)
            if settings.package_upstream
            else None
        ),
        release_dir=release.path if release is not None else None,
    )
    # Under --reload, what each file was parsed into is kept: a change re-reads that file only.
    parsed = ParseCache() if settings.reload else None
    app.state.catalog = Catalog.load(
        lessons_dir, lock, parsed, parsed_dir=settings.parsed_cache_dir
    )
    _out_of_collection()
    app.state.bundle = build_bundle()
    core = release.path if release is not None else manifest.pyodide_dir
    app.state.core_dir = core
    app.state.reference = reference.Reference()
    app.state.snapshot = _snapshot(settings, core, app.state.bundle)
    # The lesson's wheels with their modules' bytecode, beside the snapshot (web.compiled).
    app.state.compiled = compiled_wheels(settings, core, app.state)
    # The export's compressed twins, which its pages decode themselves (web.twins).
    app.state.twins = (
        export_twins(app.state, settings.compressed_cache_dir)
        if settings.static_site and settings.compressed_cache_dir is not None
        else {}
    )

    if parsed is not None:

        def reload_catalog(changed: set[Path]) -> None:
            """In a worker thread: re-read what changed; pages switch to the new catalog whole."""
            parsed.forget(changed)
            previous = app.state.catalog
            app.state.catalog = Catalog.load(lessons_dir, lock, parsed, previous, changed)

        live = LiveReload(lessons_dir, reload_catalog)

        @app.get("/_live", include_in_schema=False)
        async def live_events(request: Request) -> StreamingResponse:
            return StreamingResponse(
                live.events(request),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
            )

    app.add_middleware(SecurityHeadersMiddleware)
    app.include_router(pages.router)
    app.include_router(pyodide_files.router)
    app.include_router(offline.router)
    app.include_router(reference.router)
    _mount_files(app, manifest, release, settings.compressed_cache_dir)

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

    @app.api_route("/healthz", methods=READ_METHODS, include_in_schema=False)
    async def healthz() -> HTMLResponse:
        return HTMLResponse("ok")

    return app
