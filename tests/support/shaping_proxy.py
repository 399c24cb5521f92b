"""A shaping TCP proxy on loopback: a learner's link between a browser and a real server.

Every byte the client and the server exchange goes through it. Downstream (server to client) all
connections share one link of ``rate_mbit`` megabits per second: each piece waits until the link
has carried everything queued before it (a token bucket one quantum deep, so the rate holds from
the first byte). A new connection waits ``latency_ms`` before it reaches the server (the
handshake's round trip), and so does the first byte of every response (the request's round
trip). Upstream goes unshaped.

It follows HTTP/1.1 (keep-alive, pipelining) on each connection and records one
:class:`~tests.support.http_stream.Exchange` per request: method, path, headers, status, bytes on
the wire and when they were delivered. Faults for tests, each on the responses whose path matches
a regular expression: :meth:`ShapingProxy.cut` closes the connection after N body bytes,
:meth:`ShapingProxy.stall` sends nothing more after N body bytes and holds the connection open
until the client closes it, :meth:`ShapingProxy.corrupt` flips body bytes,
:meth:`ShapingProxy.strip_encoding` drops the ``Content-Encoding`` header (the body stays as the
server encoded it).

It runs its own event loop in a thread, so synchronous code (Playwright's sync API) can use it::

    with ShapingProxy("http://127.0.0.1:8000", rate_mbit=20, latency_ms=40) as proxy:
        proxy.cut(r"\\.wasm$", after=100_000)
        page.goto(proxy.url + "/lessons/...")
        proxy.exchanges()
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections import deque
from urllib.parse import urlsplit

from tests.support.http_stream import Exchange, Fault, RequestStream, ResponseStream

#: Largest piece sent as one unit over the shared link: at 20 Mbit/s, 6.6 ms of link time, so
#: parallel downloads interleave finely.
QUANTUM = 16 * 1024


class Link:
    """The shared downstream link: pieces go out one after another at ``rate`` bytes per second."""

    def __init__(self, rate_mbit: float | None) -> None:
        self.rate = rate_mbit * 1e6 / 8 if rate_mbit else None
        self.free_at = 0.0

    async def carry(self, size: int) -> None:
        """Wait until a piece of ``size`` bytes has crossed the link."""
        if self.rate is None:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        self.free_at = max(now, self.free_at) + size / self.rate
        await asyncio.sleep(self.free_at - now)


class ShapingProxy:
    """A proxy to ``target`` (``http://host:port``) on a loopback port of its own (:attr:`url`)."""

    def __init__(
        self, target: str, rate_mbit: float | None = 20.0, latency_ms: float = 40.0
    ) -> None:
        parts = urlsplit(target)
        self.target = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.link = Link(rate_mbit)
        self.latency = latency_ms / 1000
        self.url = ""
        self.connections = 0
        self._ids = itertools.count(1)
        self._faults: list[Fault] = []
        self._log: list[Exchange] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        #: The connections' tasks that have started, held here: the loop holds tasks only weakly.
        self._connections: set[asyncio.Task[None]] = set()
        self._closing = False

    # -- the API for tests and benchmarks (any thread) --

    def set_link(self, rate_mbit: float | None, latency_ms: float) -> None:
        """Change the link for what is sent from now on."""
        self.link = Link(rate_mbit)
        self.latency = latency_ms / 1000

    def cut(self, pattern: str, after: int, times: int | None = 1) -> None:
        """Close the connection once ``after`` body bytes of a matching response are sent."""
        self._add(Fault("cut", pattern, times, after=after))

    def stall(self, pattern: str, after: int, times: int | None = 1) -> None:
        """Send nothing more of a matching response once ``after`` body bytes are sent, and hold
        its connection open until the client closes it: a download that stalls."""
        self._add(Fault("stall", pattern, times, after=after))

    def corrupt(
        self, pattern: str, at: int | None = None, count: int = 16, times: int | None = 1
    ) -> None:
        """Flip ``count`` body bytes from byte ``at`` (default: the middle) of matching bodies."""
        self._add(Fault("corrupt", pattern, times, at=at, count=count))

    def strip_encoding(self, pattern: str, times: int | None = None) -> None:
        """Drop the ``Content-Encoding`` header of matching responses; the body stays encoded."""
        self._add(Fault("strip-encoding", pattern, times))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def exchanges(self) -> list[Exchange]:
        """Every request seen so far, in the order the client sent them."""
        with self._lock:
            return list(self._log)

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def bytes_down(self, until: float | None = None) -> int:
        """Bytes delivered to clients (heads and bodies), all or up to ``time.time()`` ``until``."""
        moment = float("inf") if until is None else until
        return sum(e.bytes_before(moment) for e in self.exchanges())

    # -- lifetime --

    def __enter__(self) -> ShapingProxy:
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._accept, "127.0.0.1", 0)
                )
            except BaseException as exc:  # reported to the caller's thread
                failure.append(exc)
                started.set()
                return
            self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=run, name="shaping-proxy", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    async def _shutdown(self) -> None:
        """Stop listening, then end every connection and wait until no task is left on the loop.

        A connection accepted a moment ago may not have started its task yet. It is not cancelled:
        a task cancelled before its first step ends cancelled, and asyncio's stream server logs
        that as an error. It gets a turn instead, and ends at once, the proxy being closed. A task
        the closed loop dropped unrun would warn later, from the garbage collector, in whatever
        test runs then."""
        assert self._server is not None
        self._closing = True
        self._server.close()
        me = asyncio.current_task()
        cancelled: set[asyncio.Task[None]] = set()
        while True:
            await asyncio.sleep(0)  # tasks made by callbacks already scheduled take a first step
            others = asyncio.all_tasks() - {me}
            if not others:
                return
            for task in self._connections - cancelled:
                task.cancel()
                cancelled.add(task)
            await asyncio.wait(others)

    def _add(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def _current_faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    def _record(self, exchange: Exchange, pending: deque[Exchange]) -> None:
        pending.append(exchange)
        with self._lock:
            self._log.append(exchange)

    # -- one connection --

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        """Relay one client connection until either side ends it or the proxy closes.

        It never ends cancelled: asyncio's stream server asks a finished connection task for its
        exception, and for a cancelled one that raises, and is logged as an error."""
        task = asyncio.current_task()
        if self._closing or task is None:
            client_w.close()
            return
        self._connections.add(task)
        try:
            await self._relay(client_r, client_w)
        except asyncio.CancelledError:
            client_w.close()
        finally:
            self._connections.discard(task)

    async def _relay(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        number = next(self._ids)
        self.connections += 1
        try:
            await asyncio.sleep(self.latency)
            server_r, server_w = await asyncio.open_connection(*self.target)
        except (OSError, asyncio.CancelledError):
            client_w.close()
            return
        pending: deque[Exchange] = deque()
        requests = RequestStream(number, lambda e: self._record(e, pending))
        responses = ResponseStream(pending, self._current_faults)
        up = asyncio.ensure_future(self._upstream(client_r, server_w, requests))
        try:
            await self._downstream(server_r, client_w, responses)
            if responses.stalled:
                await up  # until the client closes the connection
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            up.cancel()
            for writer in (client_w, server_w):
                writer.close()
            await asyncio.gather(up, return_exceptions=True)

    async def _upstream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, requests: RequestStream
    ) -> None:
        try:
            while data := await reader.read(65536):
                requests.feed(data)
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except OSError:
            pass

    async def _downstream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, responses: ResponseStream
    ) -> None:
        loop = asyncio.get_running_loop()
        while True:
            data = await reader.read(65536)
            if not data:
                responses.end()
                return
            arrived = loop.time()
            pieces, close = responses.feed(data)
            for exchange, piece in pieces:
                if exchange is not None and not exchange.delivered and self.latency:
                    await asyncio.sleep(max(arrived + self.latency - loop.time(), 0))
                for start in range(0, len(piece), QUANTUM):
                    part = piece[start : start + QUANTUM]
                    await self.link.carry(len(part))
                    writer.write(part)
                    await writer.drain()
                    if exchange is not None:
                        now = time.time()
                        exchange.delivered.append((now, len(part)))
                        if exchange.complete:
                            exchange.finished = now
            if close:
                return
