"""Live reload for authors: watch the lessons folder, re-parse, and tell open pages to refresh.

Pages opened while ``promptdojo serve --reload`` runs listen on ``/_live`` (server-sent events);
every change under the lessons folder reloads the catalog and sends them ``reload``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from starlette.requests import Request
from watchfiles import awatch

log = logging.getLogger("promptdojo.web")

#: How often an idle stream sends a comment, so proxies and the browser keep it open.
KEEPALIVE_SECONDS = 15.0


class LiveReload:
    """Watches ``lessons_dir``; calls ``on_change`` and bumps :attr:`version` on every change."""

    def __init__(self, lessons_dir: Path, on_change: Callable[[], None]) -> None:
        self.lessons_dir = lessons_dir
        self.on_change = on_change
        self.version = 0
        self._changed = asyncio.Condition()
        self._stop = asyncio.Event()

    async def watch(self) -> None:
        """Run until :meth:`stop`; one reload per batch of file changes."""
        async for changes in awatch(self.lessons_dir, stop_event=self._stop, debounce=200):
            names = sorted({Path(path).name for _, path in changes})
            log.info("lessons changed (%s): reloading", ", ".join(names))
            try:
                self.on_change()
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
