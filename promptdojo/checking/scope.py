"""Which steps one ``promptdojo check`` run takes on: ``--changed REF`` (the lessons whose files
changed since a git ref, or every lesson when the learner library or the kernel changed) and
``--shard I/N`` (one of N deterministic, balanced parts, for N CI jobs of a matrix).

Shards are made of steps, balanced by the step times the last ``check --record`` kept in
``check-times.json`` beside the lesson folders (per runtime: ``cpython`` and ``pyodide``); a step
with no time counts as the mean of the known ones. The same files and times give every job the
same split, so N jobs together run every step exactly once.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

CHANGED_HELP = (
    "Check only the lessons whose files changed since this git ref (e.g. origin/main), or every "
    "lesson when the learner library or the kernel changed."
)
SHARD_HELP = (
    "Check part I of N (1-based), split by step and balanced by check-times.json, so N CI jobs "
    "share the work."
)
TIMES_FILE = "check-times.json"
_SHARD = re.compile(r"([0-9]+)/([0-9]+)")


class ScopeError(ValueError):
    """``--changed`` or ``--shard`` cannot be used as given (``code`` 2; the message says why),
    or leave nothing to check (``code`` 0)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(f"error: {message}" if code else message)
        self.code = code


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` → ``(2, 4)``; anything else is refused with what to write."""
    match = _SHARD.fullmatch(text.strip())
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise ScopeError(f"--shard {text!r} must be I/N with 1 ≤ I ≤ N, e.g. --shard 2/4")
    return int(match[1]), int(match[2])


#: The front end's rooms that boot Pyodide and run cells (``boot.js`` and what it imports), below
#: the source tree: an installed package has no front-end sources, only their build.
BOOT_ROOMS = ("static/js/kernel", "static/js/shared")


def _library() -> list[Path]:
    """The files whose change can change any cell's output: the learner library and kernel
    (the package, less its authoring, checking, web and command-line rooms), and the front end's
    :data:`BOOT_ROOMS` when the source tree is there."""
    import promptdojo

    package = Path(promptdojo.__file__).resolve().parent
    authoring = ("course", "checking", "web", "cli.py", "cli_options.py", "__main__.py")
    keep = [p for p in package.iterdir() if p.name not in authoring]
    rooms = [package.parent / room for room in BOOT_ROOMS]
    return [*keep, *(room for room in rooms if room.is_dir())]


def _git(args: list[str], cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ScopeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def changed_files(ref: str, cwd: Path) -> list[Path]:
    """Files that differ from ``ref`` (committed, staged or not) or are new and not ignored."""
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    names = _git(["diff", "--name-only", ref, "--"], cwd).splitlines()
    names += _git(["ls-files", "--others", "--exclude-standard"], top).splitlines()
    return [(top / name).resolve() for name in names if name]


def changed_lessons(folders: list[Path], ref: str, library: list[Path] | None = None) -> list[Path]:
    """The lesson ``folders`` with a file changed since ``ref``; all of them when a file of
    ``library`` (by default the learner library and the kernel) changed."""
    if not folders:
        return []
    changed = changed_files(ref, folders[0])
    library = [p.resolve() for p in (_library() if library is None else library)]
    if any(path == lib or lib in path.parents for path in changed for lib in library):
        return folders
    return [f for f in folders if any(f.resolve() in path.parents for path in changed)]


def read_times(lessons_dir: Path, runtime: str) -> dict[str, float]:
    """Recorded step times (seconds) by step file relative to ``lessons_dir``."""
    try:
        data = json.loads((lessons_dir / TIMES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    times = data.get(runtime) if isinstance(data, dict) else None
    if not isinstance(times, dict):
        return {}
    return {str(k): float(v) for k, v in times.items() if isinstance(v, int | float) and v >= 0}


def write_times(lessons_dir: Path, runtime: str, times: dict[str, float]) -> Path:
    """Keep ``times`` for ``runtime`` in ``lessons_dir``'s times file (others' times stay)."""
    path = lessons_dir / TIMES_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    mine = {**(data.get(runtime) or {}), **{k: round(v, 2) for k, v in times.items()}}
    data[runtime] = dict(sorted(mine.items()))
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def split(items: Iterable[str], times: dict[str, float], shards: int) -> list[list[str]]:
    """``items`` in ``shards`` parts of near-equal total time: longest first, each to the part
    with the least time so far (the lowest-numbered on a tie). Deterministic."""
    items = sorted(set(items))
    known = [times[i] for i in items if i in times]
    default = sum(known) / len(known) if known else 1.0
    weight = {i: times.get(i, default) for i in items}
    parts: list[list[str]] = [[] for _ in range(shards)]
    loads = [0.0] * shards
    for item in sorted(items, key=lambda i: (-weight[i], i)):
        index = min(range(shards), key=lambda k: (loads[k], k))
        parts[index].append(item)
        loads[index] += weight[item]
    return [sorted(part) for part in parts]


def shard_steps(folders: list[Path], shard: tuple[int, int], runtime: str) -> list[Path]:
    """The step files of part ``shard`` (I, N) of the lessons ``folders``."""
    from promptdojo.course.parse import STEP_FILE, step_files

    steps = {f: [p for p in step_files(f) if STEP_FILE.match(p.name)] for f in folders}
    parents = {f.parent for f in folders}
    times = {}
    for parent in parents:
        times.update({str(parent / k): v for k, v in read_times(parent, runtime).items()})
    items = [str(p) for paths in steps.values() for p in paths]
    index, count = shard
    return [Path(p) for p in split(items, times, count)[index - 1]]


def scope(paths: list[Path], changed: str | None, shard: str | None, runtime: str) -> list[Path]:
    """What to check of ``paths`` under ``--changed`` and ``--shard``; ``paths`` as they are
    when neither is given."""
    if changed is None and shard is None:
        return paths
    from promptdojo.course.validate import lesson_folders

    part = parse_shard(shard) if shard is not None else None
    folders, problems = lesson_folders(paths)
    if problems:
        raise ScopeError("\n".join(str(problem) for problem in problems))
    if changed is not None:
        folders = changed_lessons(folders, changed)
        if not folders:
            raise ScopeError(f"nothing to check: no lesson changed since {changed}", code=0)
    if part is None:
        return folders
    steps = shard_steps(folders, part, runtime)
    if not steps:
        raise ScopeError(f"nothing to check: shard {shard} has no step", code=0)
    return steps


def scope_or_exit(
    paths: list[Path],
    changed: str | None,
    shard: str | None,
    runtime: str,
    echo: Callable[..., None],
) -> list[Path]:
    """:func:`scope` for the command line: a mistake is printed and exits 2; nothing to check
    is said and exits 0."""
    try:
        return scope(paths, changed, shard, runtime)
    except ScopeError as exc:
        echo(str(exc), err=bool(exc.code))
        raise SystemExit(exc.code) from None
