"""Live reload for authors: watch the lessons folder, re-parse, and tell open pages to refresh.

Pages opened while ``promptdojo serve --reload`` runs listen on ``/_live`` (server-sent events);
every change under the lessons folder reloads the catalog and sends them ``reload``. The catalog
is parsed in a worker thread, so a big or slow file never stops the server answering; editors'
own files and anything that is not a regular file or a folder (a FIFO) are not changes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from starlette.requests import Request
from watchfiles import Change, DefaultFilter, awatch

from promptdojo.course.problems import is_editor_file

log = logging.getLogger("promptdojo.web")

#: A batch of changes is handed over once the files were quiet this long (watchfiles' ``step``;
#: its default, 50 ms, was most of the time from a saved step to the reload). A save is one
#: burst of events microseconds apart, so 20 ms still gives one reload per save.
WATCH_STEP_MS = 20
#: How often an idle stream sends a comment, so proxies and the browser keep it open.
KEEPALIVE_SECONDS = 15.0


class LessonChanges(DefaultFilter):
    """The changes worth a reload: watchfiles' defaults (no ``.git``, ``__pycache__``...), less
    hidden and editor files (``.#01-a.md``, ``4913``, ``01-a.md~``) and anything that is
    neither a regular file nor a folder (reading a FIFO would wait for a writer)."""

    def __call__(self, change: Change, path: str) -> bool:
        if is_editor_file(os.path.basename(path)):
            return False
        if change is not Change.deleted:
            try:
                mode = os.stat(path).st_mode
            except OSError:
                return super().__call__(change, path)  # gone already: a deletion
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                return False
        return super().__call__(change, path)


class LiveReload:
    """Watches ``lessons_dir``; calls ``on_change`` with the changed paths, in a worker thread,
    and bumps :attr:`version`, on every change."""

    def __init__(self, lessons_dir: Path, on_change: Callable[[set[Path]], None]) -> None:
        self.lessons_dir = lessons_dir
        self.on_change = on_change
        self.version = 0
        self._changed = asyncio.Condition()
        self._stop = asyncio.Event()

    async def watch(self) -> None:
        """Run until :meth:`stop`; one reload per batch of file changes."""
        async for changes in awatch(
            self.lessons_dir,
            stop_event=self._stop,
            debounce=200,
            step=WATCH_STEP_MS,
            watch_filter=LessonChanges(),
        ):
            paths = {Path(path) for _, path in changes}
            log.info("lessons changed (%s): reloading", ", ".join(sorted(p.name for p in paths)))
            try:
                await asyncio.to_thread(self.on_change, paths)
            except Exception:  # a reload must never take the server down
                log.exception("reloading lessons failed")
            self.version += 1
            async with self._changed:
                self._changed.notify_all()

    async def stop(self) -> None:
        """End :meth:`watch` and every open event stream."""
        self._stop.set()
        async with self._changed:
            self._changed.notify_all()

    async def events(self, request: Request) -> AsyncIterator[str]:
        """Server-sent events for one page: ``reload`` after each change."""
        seen = self.version
        yield "retry: 1000\n\n"
        while not self._stop.is_set() and not await request.is_disconnected():
            async with self._changed:
                try:
                    await asyncio.wait_for(self._changed.wait(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
            if self.version != seen:
                seen = self.version
                yield "data: reload\n\n"
