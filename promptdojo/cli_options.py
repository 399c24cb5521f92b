"""The command line's options, each declared once as a typed alias (typer's ``Annotated`` form),
so that a command reads as the list of what it takes and ``cli.py`` as what each one does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from promptdojo.checking.scope import CHANGED_HELP, SHARD_HELP

#: Package wheels for the browser and for ``check --pyodide`` (promptdojo.pyodide.cache).
DEFAULT_CACHE = Path(".cache/pyodide-packages")
#: Compressed copies of Pyodide's files, made once per file (promptdojo.pyodide.compressed).
DEFAULT_COMPRESSED_CACHE = Path(".cache/compressed")
#: Memory snapshots of the interpreter, one per core and bundle (promptdojo.pyodide.snapshot).
DEFAULT_SNAPSHOT_CACHE = Path(".cache/snapshots")

CompressedCache = Annotated[Path, typer.Option(help="Where compressed copies are kept.")]
LessonsDirArgument = Annotated[
    Path,
    typer.Argument(help="Folder holding one sub-folder per lesson.", show_default=True),
]
LessonsDirOption = Annotated[Path, typer.Option(help="Folder holding one sub-folder per lesson.")]
SnapshotCache = Annotated[
    Path,
    typer.Option(help="Where memory snapshots are kept (made there when missing)."),
]

# serve
Host = Annotated[str, typer.Option(help="Interface to listen on.")]
Port = Annotated[int, typer.Option(help="TCP port to listen on.")]
Dev = Annotated[bool, typer.Option("--dev", help="Development mode: show broken lessons' errors.")]
Reload = Annotated[
    bool,
    typer.Option(
        "--reload", help="Watch LESSONS_DIR and refresh open pages on change (implies --dev)."
    ),
]
ServedPackages = Annotated[
    Path | None,
    typer.Option(help="Folder of Pyodide package wheels (e.g. numpy) to serve to browsers."),
]
PackageUpstream = Annotated[
    str,
    typer.Option(
        help="Where a package missing from the cache is fetched from, once; {version} is "
        "the served Pyodide's version (default: the official Pyodide CDN).",
        show_default=False,
    ),
]
Offline = Annotated[
    bool, typer.Option("--offline", help="Never fetch packages; serve only what is cached.")
]
ServedPyodide = Annotated[
    Path | None,
    typer.Option(
        help="Serve this unpacked full Pyodide release (core and packages) instead of the "
        "built-in core."
    ),
]
ServeWithoutSnapshot = Annotated[
    bool,
    typer.Option(
        "--no-snapshot",
        help="Boot Python from scratch on every page instead of restoring a memory snapshot "
        "(slower; for debugging the boot). By default the server makes a snapshot of the "
        "served Pyodide with the lesson library imported (in --snapshot-cache, a few "
        "seconds, once per Pyodide build and library version) and pages restore it.",
    ),
]
ServeSnapshotPackages = Annotated[
    bool,
    typer.Option(
        "--snapshot-packages/--no-snapshot-packages",
        help="Make a second snapshot with the lessons' packages (numpy) imported, which their "
        "pages restore instead of installing and importing them after the restore. It costs "
        "more bytes on a first visit (numpy's memory) and saves its import on every visit.",
    ),
]
LogLevel = Annotated[
    str, typer.Option(help="uvicorn log level: debug, info (logs each request), warning.")
]

# export
ExportOut = Annotated[Path, typer.Argument(help="Folder to write the static site into.")]
ExportedLessons = Annotated[
    list[str] | None,
    typer.Argument(help="Lesson ids to export (default: every lesson in --lessons-dir)."),
]
BaseUrl = Annotated[
    str,
    typer.Option(help="The path the site is served below, e.g. /course/ (GitHub Pages)."),
]
ExportedPackages = Annotated[
    Path, typer.Option(help="Folder of Pyodide package wheels the lessons need.")
]
ExportedPyodide = Annotated[
    Path | None,
    typer.Option(help="Export this unpacked Pyodide release instead of the built-in core."),
]
ExportWithoutSnapshot = Annotated[
    bool, typer.Option("--no-snapshot", help="Export no memory snapshot (cold boots).")
]

# check
CheckedPaths = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Lesson folders, folders of lessons, step files (lessons/x/02-y.md), or one "
        "cell as pytest names it (lessons/x/02-y.md::cell-id) (default: lessons)."
    ),
]
Jobs = Annotated[
    int | None, typer.Option("-j", "--jobs", help="Steps run at once (default: CPU count).")
]
JunitXml = Annotated[
    Path | None, typer.Option("--junit-xml", help="Also write a JUnit XML report here.")
]
Record = Annotated[
    bool, typer.Option("--record", help="Write each cell's output to <lesson>/recorded/.")
]
CheckOutputs = Annotated[
    bool, typer.Option("--check-outputs", help="Fail when an output drifts from its record.")
]
Show = Annotated[bool, typer.Option(help="Print what each cell printed and showed.")]
InPyodide = Annotated[
    bool, typer.Option("--pyodide", help="Run the cells in real Pyodide under Node.")
]
CheckPackages = Annotated[Path, typer.Option(help="Package cache for --pyodide (numpy's wheel).")]
CheckedPyodide = Annotated[
    Path | None,
    typer.Option(
        help="Run the cells in this unpacked Pyodide release, with the package wheels it "
        "holds, instead of the built-in core (implies --pyodide)."
    ),
]
CheckSnapshotCache = Annotated[
    Path,
    typer.Option(help="Under --pyodide, where memory snapshots are kept (made when missing)."),
]
CheckWithoutSnapshot = Annotated[
    bool,
    typer.Option(
        "--no-snapshot",
        help="Under --pyodide, boot Python from scratch for each step instead of restoring "
        "the memory snapshot pages restore (for debugging the boot).",
    ),
]
PassEnv = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-env",
        metavar="NAME",
        help="Let the cells see this environment variable too (repeatable). Cells see only "
        "PATH, HOME, the locale and a few more by default, so a CI secret stays out of "
        "outputs and records.",
    ),
]
Changed = Annotated[str | None, typer.Option(metavar="REF", help=CHANGED_HELP)]
Shard = Annotated[str | None, typer.Option(metavar="I/N", help=SHARD_HELP)]
