"""Many learners opening the same step at once, as plain HTTP/1.1 clients (no browser).

Each client replays a browser's requests (method, path, the browser's own headers, so its
``Accept-Encoding``) over at most six connections, as Chromium does per host, and reads every
response to its end. All clients go through one :class:`~tests.support.shaping_proxy.ShapingProxy`,
so they share its link.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

from tests.support.shaping_proxy import ShapingProxy

#: Request headers a replay leaves out: the connection's own, and what differs per browser.
_DROPPED = {"host", "connection", "cookie", "if-none-match", "if-modified-since", "range"}


@dataclass
class Request:
    method: str
    path: str
    headers: list[tuple[str, str]]


async def _read_response(reader: asyncio.StreamReader) -> bool:
    """Read one response to its end; True if the connection can carry another request."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    version = lines[0].split(" ", 1)[0]
    fields = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if fields.get("transfer-encoding", "").lower().endswith("chunked"):
        while size := int((await reader.readline()).split(b";")[0].strip() or b"0", 16):
            await reader.readexactly(size + 2)
        while (await reader.readline()) not in (b"\r\n", b""):
            pass
    elif "content-length" in fields:
        await reader.readexactly(int(fields["content-length"]))
    else:
        while await reader.read(65536):
            pass
        return False
    close = fields.get("connection", "").lower() == "close"
    return not close and version == "HTTP/1.1"


async def _connection(
    host: str, port: int, queue: asyncio.Queue[Request], failures: list[str]
) -> None:
    """Fetch requests from ``queue`` one after another; a connection the host drops before its
    response is counted in ``failures`` and the request retried on a new one (as a browser
    retries a request on a reused connection), up to three times."""
    reader = writer = None
    while not queue.empty():
        request = queue.get_nowait()
        lines = [f"{request.method} {request.path} HTTP/1.1", f"Host: {host}:{port}"]
        lines += [f"{k}: {v}" for k, v in request.headers if k.lower() not in _DROPPED]
        for attempt in range(4):
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(host, port)
                assert reader is not None
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
                await writer.drain()
                keep = await _read_response(reader)
            except (OSError, asyncio.IncompleteReadError) as exc:
                failures.append(f"{request.path}: {type(exc).__name__}")
                keep = False
                if attempt == 3:
                    raise
            else:
                attempt = -1
            if not keep and writer is not None:
                writer.close()
                reader = writer = None
            if attempt == -1:
                break
    if writer is not None:
        writer.close()


async def _client(
    host: str, port: int, requests: list[Request], connections: int, failures: list[str]
) -> float:
    queue: asyncio.Queue[Request] = asyncio.Queue()
    for request in requests:
        queue.put_nowait(request)
    await asyncio.gather(*(_connection(host, port, queue, failures) for _ in range(connections)))
    return time.monotonic()


def crowd(
    target: str,
    requests: list[Request],
    clients: int = 30,
    rate_mbit: float = 100.0,
    latency_ms: float = 40.0,
    connections: int = 6,
) -> dict[str, float]:
    """``clients`` learners fetch ``requests`` at once through one link to ``target``.

    Returns the time until the last has everything, the bytes the link carried, and the limit
    (those bytes ÷ the link's rate).
    """
    with ShapingProxy(target, rate_mbit=rate_mbit, latency_ms=latency_ms) as proxy:
        host, port = proxy.url.removeprefix("http://").split(":")

        async def everyone() -> list[float]:
            return await asyncio.gather(
                *(_client(host, int(port), requests, connections, failures) for _ in range(clients))
            )

        done: list[float] = []
        failures: list[str] = []
        # In a thread of its own: the caller may be inside an event loop (Playwright's sync API).
        thread = threading.Thread(target=lambda: done.extend(asyncio.run(everyone())))
        start = time.monotonic()
        thread.start()
        thread.join()
        carried = proxy.bytes_down()
        incomplete = sum(not e.complete for e in proxy.exchanges())
    last = max(done) - start
    limit = carried * 8 / (rate_mbit * 1e6)
    return {
        "clients": clients,
        "requests_per_client": len(requests),
        "bytes_per_client": round(carried / clients),
        "last_done_ms": round(last * 1000),
        "limit_ms": round(limit * 1000),
        "ratio": round(last / limit, 3),
        "incomplete_responses": incomplete,
        "dropped_connections": len(failures),
        "dropped_examples": sorted(set(failures))[:5],
    }
