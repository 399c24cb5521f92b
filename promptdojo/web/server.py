"""Running the app under uvicorn as a service that slow or idle clients cannot take down.

uvicorn closes a keep-alive connection that stays idle after a response, but it gives a client
all the time it wants to send its request head: a client that trickles one byte a second keeps
its connection, and so one file descriptor, for ever. Enough of them (about a thousand under a
common ``ulimit -n``) and the server can accept nobody else. Here each connection:

* must finish its request head within :data:`HEAD_SECONDS` of connecting, or of its previous
  response, or is closed;
* may be closed early to make room: when the open connections reach the limit the file
  descriptors allow, the oldest one with no request in progress is closed for each new one.

A request being answered (a page, a file, the live-reload stream) is never cut. In front of a
reverse proxy (docs/deploying.md) the proxy does this too; this guard keeps a bare server up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import socket
from collections import OrderedDict
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a complete request head.
HEAD_SECONDS = 10.0
#: Seconds an idle keep-alive connection is kept after a response (uvicorn's own timer).
KEEP_ALIVE_SECONDS = 5
#: Seconds open requests (the live-reload stream) get to finish when the server stops.
GRACEFUL_SHUTDOWN_SECONDS = 2
#: File descriptors kept for everything but client connections (files served, logs, the cache).
RESERVED_DESCRIPTORS = 64
#: The most connections asyncio accepts in one go (uvicorn's ``backlog``). Until the guard sees
#: them, up to about three such bursts hold descriptors beyond the open connections.
ACCEPT_BURST = 64
#: Connections the kernel queues until they are accepted: a full queue drops a new client's
#: connection attempt, which it retries only a second later.
LISTEN_BACKLOG = 2048
#: The most file descriptors asked for, however high the hard limit.
MOST_DESCRIPTORS = 65_536


def raise_descriptor_limit() -> int:
    """Raise this process's soft limit of open files towards its hard limit; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = MOST_DESCRIPTORS if hard == resource.RLIM_INFINITY else min(hard, MOST_DESCRIPTORS)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    return soft


def guarded_protocol(max_connections: int, head_seconds: float = HEAD_SECONDS) -> type:
    """An HTTP/1.1 protocol class (uvicorn's h11 one) that keeps the rules of this module."""
    open_connections: OrderedDict[GuardedProtocol, None] = OrderedDict()

    class GuardedProtocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def busy(self) -> bool:
            """Whether a request of this connection is being answered."""
            return self.cycle is not None and not self.cycle.response_complete

        def _await_head(self) -> None:
            self._stop_waiting()
            self._head_timer = self.loop.call_later(head_seconds, self._head_late)

        def _stop_waiting(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if not self.busy():
                open_connections.pop(self, None)
                self.transport.abort()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            open_connections[self] = None
            self._await_head()
            if len(open_connections) > max_connections:
                for other in open_connections:
                    if other is not self and not other.busy():
                        del open_connections[other]
                        other.transport.abort()  # frees its descriptor at once
                        break

        def connection_lost(self, exc: Exception | None) -> None:
            open_connections.pop(self, None)
            self._stop_waiting()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before:  # a request head arrived
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and not self.busy():
                self._await_head()

    return GuardedProtocol


def server_config(app: Any, host: str, port: int, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for ``app`` with this module's timeouts and connection guard."""
    descriptors = raise_descriptor_limit()
    max_connections = max(16, descriptors - RESERVED_DESCRIPTORS - 3 * ACCEPT_BURST)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(max_connections),
        backlog=ACCEPT_BURST,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        **options,
    )


class GuardedServer(uvicorn.Server):
    """uvicorn's server, with a listen queue longer than the accept burst (asyncio uses one
    number for both)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        for server in getattr(self, "servers", []):
            for listening in server.sockets:
                # A second listen() on the same socket (through a duplicate) sets its queue.
                with socket.socket(fileno=os.dup(listening.fileno())) as same:
                    same.listen(LISTEN_BACKLOG)


def run(app: Any, host: str, port: int, **options: Any) -> None:
    """Serve ``app`` at ``host:port`` until stopped (Ctrl+C)."""
    GuardedServer(server_config(app, host, port, **options)).run()
