"""Many lesson folders read at once: in parallel processes when there are many, and through a
cache folder that keeps what each folder was read into, so a folder none of whose files changed
(nor the parser, nor the lock it is read against) is not read again.

``validate``, the server and ``export`` share it: after one of them has read a course, the others
start from what it kept (``.cache/parsed/`` by default, beside the other caches). What is kept is
named by the files' contents, not their times: a fresh clone at the same path (a CI job that
restores the folder from an earlier run) reads again only the lessons that differ.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: Below this many folders, starting worker processes costs more than it saves.
PARALLEL_FROM = 16
#: Where what each lesson was read into is kept, relative to the working folder.
DEFAULT_PARSED_CACHE = Path(".cache/parsed")
_BROKEN = (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError)


def _parser_version(salt: str) -> str:
    """What the parse depends on besides the lesson's files: the authoring code and the pinned
    lock (their contents), and this Python."""
    import promptdojo.course
    from promptdojo.pyodide.lock import Lock

    digest = hashlib.sha256(repr(sys.version_info).encode())
    course = Path(promptdojo.course.__file__).parent
    # The course room, and the kernel's rules for controls that it validates with.
    for path in [
        *sorted(course.glob("*.py")),
        course.parent / "ui.py",
        course.parent / "kernel.py",
    ]:
        digest.update(f"{path.name}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    digest.update(Lock.pinned().version.encode())
    digest.update(salt.encode())
    return digest.hexdigest()


def _identity(folder: Path, version: str) -> str:
    """A name for the state of ``folder``'s files: each one's name and contents (the parsed
    lesson names its files by path, so the folder's path is part of it too)."""
    digest = hashlib.sha256(f"{folder.resolve()}\0{version}".encode())
    entries: list[tuple[str, str, bool]] = []
    for below in ("", "recorded/"):
        try:
            with os.scandir(folder / below) as found:  # no Path per file: 300 lessons add up
                entries += [(below + e.name, e.path, e.is_file()) for e in found]
        except OSError:
            continue
    for name, path, is_file in sorted(entries):
        content = b"\0folder"
        try:
            if is_file:
                with open(path, "rb") as file:
                    content = file.read()
        except OSError:
            continue
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(hashlib.sha256(content).digest())
    return digest.hexdigest()[:40]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off for the block, and on again after it if it was on."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _made(work: Callable[[Path], T], folder: Path) -> T:
    """``work(folder)`` with the cycle collector paused: reading a lesson makes hundreds of
    thousands of short-lived objects (tokens, syntax trees) and next to no cycles, and the
    collections they would set off cost a tenth of the time."""
    with _collector_paused():
        return work(folder)


def _read_pickled(
    work: Callable[[Path], T], folder: Path, cache: Path | None, version: str
) -> tuple[T, bytes | None]:
    """``work(folder)``, or what ``cache`` kept of it; and its pickle, when the cache holds it
    (so that a worker sends back the bytes it wrote, not the same object pickled again)."""
    if cache is None:
        return _made(work, folder), None
    kept = cache / f"{_identity(folder, version)}.pickle"
    try:
        blob = kept.read_bytes()
        return pickle.loads(blob), blob
    except _BROKEN:
        pass
    made = _made(work, folder)
    blob = pickle.dumps(made)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache, delete=False, suffix=".tmp") as out:
            out.write(blob)
        os.replace(out.name, kept)
    except OSError:
        pass  # a cache that cannot be written only costs time
    return made, blob


def _then_of(then: Callable[[Path, T], R] | None, made: T, folder: Path) -> R | None:
    """``then(folder, made)`` with the collector paused as in :func:`_made` (None without
    ``then``)."""
    if then is None:
        return None
    with _collector_paused():
        return then(folder, made)


def _read_then(
    work: Callable[[Path], T],
    then: Callable[[Path, T], R] | None,
    folder: Path,
    cache: Path | None,
    version: str,
) -> tuple[T, R | None]:
    """:func:`_read_pickled`'s result and what ``then`` made of it."""
    made, _ = _read_pickled(work, folder, cache, version)
    return made, _then_of(then, made, folder)


def _worker(
    work: Callable[[Path], T],
    then: Callable[[Path, T], R] | None,
    folder: Path,
    cache: Path | None,
    version: str,
) -> tuple[bytes, R | None]:
    """:func:`_read_then` in a worker process: the result pickled once (the bytes the cache
    keeps, when there is one), and what ``then`` made of it."""
    made, blob = _read_pickled(work, folder, cache, version)
    return (pickle.dumps(made) if blob is None else blob), _then_of(then, made, folder)


def _not_installed(folder: Path) -> tuple:
    raise RuntimeError("no task installed in this process")


#: A worker process's task, installed once as it starts (:func:`_install`): the folders sent to
#: it then travel alone, not each pair with the task and the lock it reads against (77 kB).
_TASK: Callable[[Path], tuple] = _not_installed


def _install(task: Callable[[Path], tuple]) -> None:
    global _TASK
    _TASK = task


def _installed(folder: Path) -> tuple:
    """The task :func:`_install` installed in this worker process, for ``folder``."""
    return _TASK(folder)


def parse_many(
    work: Callable[[Path], T],
    folders: list[Path],
    jobs: int | None = None,
    cache: Path | None = None,
    salt: str = "",
    then: Callable[[Path, T], R] | None = None,
) -> list:
    """``work(folder)`` for each of ``folders``, in order: from ``cache`` where it kept the
    result for the folder's files as they are, else made, in worker processes when many are to
    be made. ``work`` must be picklable (a module's function, or a partial of one); ``salt``
    names whatever else it depends on (the lock it reads against, say).

    With ``then`` (picklable too), each is the pair ``(result, then(folder, result))``:
    ``then`` runs where the folder is read, in the worker processes when they read it, and what
    it makes is never kept in the cache (so it may read files the cache does not know of, and
    ``work``'s cache stays the one the server and ``export`` share)."""
    name = getattr(getattr(work, "func", work), "__qualname__", "")
    version = _parser_version(f"{name}\0{salt}") if cache is not None else ""
    if cache is not None and cache.is_dir():  # those read before, unchanged, come from it
        kept = {f: found for f in folders if (found := _kept(f, cache, version)) is not None}
        ready = {f: (made, _then_of(then, made, f)) for f, made in kept.items()}
    else:
        ready = {}
    todo = [f for f in folders if f not in ready]
    if len(todo) < PARALLEL_FROM or (jobs or os.cpu_count() or 1) < 2:
        one = partial(_read_then, work, then, cache=cache, version=version)
        ready.update((folder, one(folder)) for folder in todo)
    else:
        # The results come back as many objects as the worker made, unpickled here while
        # the workers go on: the cycle collector, paused, does not walk them over and over.
        task = partial(_worker, work, then, cache=cache, version=version)
        with (
            _collector_paused(),
            ProcessPoolExecutor(jobs, initializer=_install, initargs=(task,)) as pool,
        ):
            # Two folders a task: the last tasks end together, so no core waits long at the end.
            sent = pool.map(_installed, todo, chunksize=2)
            ready.update(
                (folder, (pickle.loads(blob), extra))
                for folder, (blob, extra) in zip(todo, sent, strict=True)
            )
    return [ready[folder] if then is not None else ready[folder][0] for folder in folders]


def _kept(folder: Path, cache: Path, version: str):
    try:
        return pickle.loads((cache / f"{_identity(folder, version)}.pickle").read_bytes())
    except _BROKEN:
        return None


def read_safely(folder: Path, lock, cache=None):
    """``read_lesson(folder, lock, cache)``, or the parser's failure: a parser bug in one
    lesson must not take the others down. The one reader ``validate``, the server and
    ``export`` share, so that what one of them kept serves the others."""
    from promptdojo.course.parse import read_lesson

    try:
        return read_lesson(folder, lock, cache)
    except Exception as exc:
        logging.getLogger("promptdojo.web").exception(
            "lesson left out: %s: the parser failed", folder
        )
        return exc
