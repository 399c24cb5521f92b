"""The ``promptdojo`` command line: serve lessons (more commands join as they are built)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from promptdojo.cli_options import (
    DEFAULT_CACHE,
    DEFAULT_COMPRESSED_CACHE,
    DEFAULT_SNAPSHOT_CACHE,
    BaseUrl,
    Changed,
    CheckedPaths,
    CheckedPyodide,
    CheckOutputs,
    CheckPackages,
    CheckSnapshotCache,
    CheckWithoutSnapshot,
    CompressedCache,
    Dev,
    ExportedLessons,
    ExportedPackages,
    ExportedPyodide,
    ExportOut,
    ExportWithoutSnapshot,
    Host,
    InPyodide,
    Jobs,
    JunitXml,
    LessonsDirArgument,
    LessonsDirOption,
    LogLevel,
    Offline,
    PackageUpstream,
    PassEnv,
    Port,
    Record,
    Reload,
    ServedPackages,
    ServedPyodide,
    ServeSnapshotPackages,
    ServeWithoutSnapshot,
    Shard,
    Show,
    SnapshotCache,
)

app = typer.Typer(
    name="promptdojo",
    help="Interactive lessons on LLM inference: serve them, author them, check them.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _main() -> None:
    """Interactive lessons on LLM inference: serve them, author them, check them."""


pyodide_app = typer.Typer(help="Pyodide packages for the browser kernel.", no_args_is_help=True)
app.add_typer(pyodide_app, name="pyodide")


@pyodide_app.command("fetch")
def pyodide_fetch(
    packages: Annotated[
        list[str] | None, typer.Argument(help="Packages to fetch, e.g. numpy (default: numpy).")
    ] = None,
    cache: Annotated[Path, typer.Option(help="The package cache folder to fill.")] = DEFAULT_CACHE,
    upstream: Annotated[
        str | None,
        typer.Option(help="Where wheels come from (default: the official Pyodide CDN)."),
    ] = None,
) -> None:
    """Pre-fill the package cache, e.g. before teaching an offline class."""
    from promptdojo.pyodide.cache import DEFAULT_UPSTREAM, fetch
    from promptdojo.pyodide.dist import core_dir
    from promptdojo.pyodide.lock import Lock, PackageError

    lock = Lock.read(core_dir())
    source = upstream or DEFAULT_UPSTREAM.format(version=lock.version)
    try:
        fetched = fetch(packages or ["numpy"], cache, lock, source)
    except PackageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for path in fetched:
        typer.echo(f"fetched {path}")
    typer.echo(f"{cache}: {', '.join(lock.with_dependencies(packages or ['numpy']))} cached")


@pyodide_app.command("snapshot")
def pyodide_snapshot(
    pyodide_dir: Annotated[
        Path | None,
        typer.Option(help="An unpacked Pyodide release (default: the built-in core)."),
    ] = None,
    cache: Annotated[Path, typer.Option(help="Where snapshots are kept.")] = DEFAULT_SNAPSHOT_CACHE,
) -> None:
    """Make (or find) the memory snapshot pages restore, and print its name and size."""
    from promptdojo.pyodide.bundle import build_bundle
    from promptdojo.pyodide.dist import PyodideUnavailableError, core_dir
    from promptdojo.pyodide.release import Release, ReleaseError
    from promptdojo.pyodide.snapshot import SnapshotError, ensure_snapshot

    try:
        core = Release.open(pyodide_dir.resolve()).path if pyodide_dir else core_dir()
        snapshot = ensure_snapshot(core, build_bundle(), cache.resolve())
    except (PyodideUnavailableError, ReleaseError, SnapshotError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"memory snapshot {snapshot.describe()}")


@app.command()
def serve(
    lessons_dir: LessonsDirArgument = Path("lessons"),
    host: Host = "127.0.0.1",
    port: Port = 8000,
    dev: Dev = False,
    reload: Reload = False,
    package_cache: ServedPackages = None,
    package_upstream: PackageUpstream = "",
    offline: Offline = False,
    pyodide_dir: ServedPyodide = None,
    snapshot_cache: SnapshotCache = DEFAULT_SNAPSHOT_CACHE,
    compressed_cache: CompressedCache = DEFAULT_COMPRESSED_CACHE,
    no_snapshot: ServeWithoutSnapshot = False,
    snapshot_packages: ServeSnapshotPackages = True,
    log_level: LogLevel = "info",
) -> None:
    """Serve the lessons in LESSONS_DIR at http://HOST:PORT (beyond it: docs/deploying.md)."""
    from promptdojo.course.bulk import DEFAULT_PARSED_CACHE
    from promptdojo.pyodide.cache import DEFAULT_UPSTREAM
    from promptdojo.pyodide.release import ReleaseError
    from promptdojo.web.app import create_app
    from promptdojo.web.assets import AssetsMissingError
    from promptdojo.web.server import run
    from promptdojo.web.settings import Settings

    if not lessons_dir.is_dir():
        raise typer.BadParameter(f"{lessons_dir} is not a folder", param_hint="LESSONS_DIR")
    settings = Settings(
        lessons_dir=lessons_dir.resolve(),
        dev=dev or reload,
        reload=reload,
        package_cache_dir=(package_cache or DEFAULT_CACHE).resolve(),
        package_upstream=None if offline else package_upstream or DEFAULT_UPSTREAM,
        pyodide_dir=pyodide_dir.resolve() if pyodide_dir else None,
        snapshot_cache_dir=None if no_snapshot else snapshot_cache.resolve(),
        snapshot_packages=snapshot_packages,
        compressed_cache_dir=compressed_cache.resolve(),
        parsed_cache_dir=DEFAULT_PARSED_CACHE.resolve(),
    )
    try:
        application = create_app(settings)
    except (AssetsMissingError, ReleaseError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"promptdojo: serving {lessons_dir} at http://{host}:{port}")
    run(application, host=host, port=port, log_level=log_level)  # web.server: slow clients


@app.command()
def export(
    out: ExportOut,
    lessons: ExportedLessons = None,
    lessons_dir: LessonsDirOption = Path("lessons"),
    base_url: BaseUrl = "/",
    package_cache: ExportedPackages = DEFAULT_CACHE,
    pyodide_dir: ExportedPyodide = None,
    snapshot_cache: SnapshotCache = DEFAULT_SNAPSHOT_CACHE,
    compressed_cache: CompressedCache = DEFAULT_COMPRESSED_CACHE,
    no_snapshot: ExportWithoutSnapshot = False,
    snapshot_packages: ServeSnapshotPackages = True,
) -> None:
    """Write the lessons as a static site for any host or CDN, usable offline once opened.

    OUT gets the index and step pages, the assets, Pyodide (its big files with compressed twins),
    the learner bundle, the snapshot, every package wheel the lessons declare, a service worker
    and a _headers file. Deploying: docs/deploying.md.
    """
    from promptdojo.pyodide.release import ReleaseError
    from promptdojo.web.assets import AssetsMissingError
    from promptdojo.web.export import ExportError, export_site
    from promptdojo.web.settings import Settings
    from promptdojo.web.urls import BaseUrlError, normalise_base

    if not lessons_dir.is_dir():
        raise typer.BadParameter(f"{lessons_dir} is not a folder", param_hint="--lessons-dir")
    try:
        normalise_base(base_url)
    except BaseUrlError as exc:
        message = str(exc).removeprefix("--base-url ")
        raise typer.BadParameter(message, param_hint="--base-url") from None
    settings = Settings(
        lessons_dir=lessons_dir.resolve(),
        package_cache_dir=package_cache.resolve(),
        pyodide_dir=pyodide_dir.resolve() if pyodide_dir else None,
        snapshot_cache_dir=None if no_snapshot else snapshot_cache.resolve(),
        snapshot_packages=snapshot_packages,
        compressed_cache_dir=compressed_cache.resolve(),
    )
    try:
        result = export_site(settings, out, lessons or [], base_url)
    except (ExportError, AssetsMissingError, ReleaseError, BaseUrlError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(
        f"exported {result.files} files ({result.size / 1e6:.1f} MB), version {result.version}, "
        f"to {result.out}"
    )


@app.command()
def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Lesson folders, folders of lessons, or step files (default: lessons)."
        ),
    ] = None,
) -> None:
    """Check lessons without running them; print every mistake as FILE:LINE: what: fix."""
    from promptdojo.course.validate import report

    raise typer.Exit(report(paths or [Path("lessons")], typer.echo))


@app.command()
def check(
    paths: CheckedPaths = None,
    jobs: Jobs = None,
    junit_xml: JunitXml = None,
    record: Record = False,
    check_outputs: CheckOutputs = False,
    show: Show = False,
    pyodide: InPyodide = False,
    cache: CheckPackages = DEFAULT_CACHE,
    pyodide_dir: CheckedPyodide = None,
    snapshot_cache: CheckSnapshotCache = DEFAULT_SNAPSHOT_CACHE,
    no_snapshot: CheckWithoutSnapshot = False,
    pass_env: PassEnv = None,
    changed: Changed = None,
    shard: Shard = None,
) -> None:
    """Validate, then run every cell of every step; failures point at the markdown line.
    Under --pyodide, a cell that uses more than half of its time limit gets a warning.

    Exit status: 0 all passed, 1 a cell failed or a lesson is invalid, 3 some cells could not run
    (a package missing from the cache under --pyodide).
    """
    from promptdojo.checking.console import run_check
    from promptdojo.checking.scope import scope_or_exit
    from promptdojo.pyodide.release import Release, ReleaseError
    from promptdojo.pyodide.snapshot import SnapshotError

    runtime = "pyodide" if pyodide or pyodide_dir else "cpython"
    paths = scope_or_exit(paths or [Path("lessons")], changed, shard, runtime, typer.echo)
    release = None
    if pyodide_dir is not None:
        try:
            release = Release.open(pyodide_dir.resolve())
        except ReleaseError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
    try:
        code = run_check(
            paths,
            jobs=jobs,
            junit_xml=junit_xml,
            record=record,
            check_outputs=check_outputs,
            show=show,
            pyodide_cache=cache if pyodide and release is None else None,
            pyodide_release=release,
            snapshot_cache=None if no_snapshot else snapshot_cache,
            pass_env=pass_env or [],
        )
    except SnapshotError as exc:
        typer.echo(f"error: {exc} (or check with --no-snapshot)", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


@app.command()
def new(
    lesson_id: Annotated[str, typer.Argument(help="The lesson's id, e.g. top-p-sampling.")],
    lessons_dir: Annotated[Path, typer.Option("--dir", help="Folder of lessons.")] = Path(
        "lessons"
    ),
    title: Annotated[str, typer.Option(help="The lesson's title.")] = "",
    chapter: Annotated[str, typer.Option(help="Its chapter line.")] = "",
) -> None:
    """Create a new lesson with a first step that validates."""
    from promptdojo.course.scaffold import ScaffoldError, new_course_lesson

    try:
        folder, listed = new_course_lesson(lessons_dir, lesson_id, title=title, chapter=chapter)
    except ScaffoldError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    for path in sorted(folder.iterdir()):
        typer.echo(f"created {path}")
    if listed is not None:
        typer.echo(f"listed {lesson_id} in {listed}")


@app.command("new-step")
def new_step(
    lesson: Annotated[str, typer.Argument(help="Lesson folder, or a lesson id under --dir.")],
    title: Annotated[str, typer.Argument(help="The step's title.")],
    lessons_dir: Annotated[Path, typer.Option("--dir", help="Folder of lessons.")] = Path(
        "lessons"
    ),
    slug: Annotated[
        str | None, typer.Option(help="File name part (default: from the title).")
    ] = None,
) -> None:
    """Add the next numbered step to a lesson."""
    from promptdojo.course.scaffold import ScaffoldError
    from promptdojo.course.scaffold import new_step as add_step

    folder = Path(lesson) if Path(lesson).is_dir() else lessons_dir / lesson
    try:
        path = add_step(folder, title, slug)
    except ScaffoldError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"created {path}")
