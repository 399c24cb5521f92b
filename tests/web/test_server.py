"""The server under slow clients: a real uvicorn on loopback, bounded in connections and time."""

from __future__ import annotations

import asyncio
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest
import uvicorn

from promptdojo.web.app import create_app
from promptdojo.web.server import guarded_protocol
from promptdojo.web.settings import Settings

T = TypeVar("T")

#: Trickling connections: more than a common `ulimit -n` of 1024 allows at once.
SLOW_CLIENTS = 1_100
#: The open-files limit the server runs under (a common default).
SERVER_DESCRIPTORS = 1024


def run_loop(coroutine: Coroutine[object, object, T]) -> T:
    """``asyncio.run`` in a thread of its own: a browser test earlier in the same process leaves
    Playwright's event loop running in this one, where ``asyncio.run`` refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError("the server exited early")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


@pytest.fixture
def served(fixture_lessons: Path, tmp_path: Path) -> Iterator[int]:
    """`promptdojo serve` on a free loopback port, under an open-files limit of 1024."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (SERVER_DESCRIPTORS, SERVER_DESCRIPTORS))

    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "promptdojo", "serve", str(fixture_lessons)),
            *("--port", str(port), "--no-snapshot", "--log-level", "warning"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        preexec_fn=limit,
        cwd=tmp_path,
    )
    try:
        wait_until_up(f"http://127.0.0.1:{port}", process)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def trickle(port: int, stop: asyncio.Event) -> None:
    """A client that sends its request head one byte every half second, until ``stop``."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return
    try:
        writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        while not stop.is_set():
            await asyncio.sleep(0.5)
            writer.write(b"a")
            await writer.drain()
    except OSError:
        pass  # closed by the server: what it may do to a slow client
    finally:
        writer.close()


async def page_seconds(port: int) -> float:
    """Seconds until a well-behaved client has the first step page (``inf`` if it never did)."""
    started = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        writer.write(b"GET /lessons/hello/1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 5)
        writer.close()
    except (OSError, TimeoutError):
        return float("inf")
    return time.perf_counter() - started if answer.startswith(b"HTTP/1.1 200") else float("inf")


async def under_slow_clients(port: int, seconds: float) -> list[float]:
    """Page times, every 0.2 s for ``seconds``, while :data:`SLOW_CLIENTS` trickle."""
    stop = asyncio.Event()
    slow = [asyncio.create_task(trickle(port, stop)) for _ in range(SLOW_CLIENTS)]
    await asyncio.sleep(0.5)  # they are all connecting
    times = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        times.append(await page_seconds(port))
        await asyncio.sleep(0.2)
    stop.set()
    await asyncio.gather(*slow)
    return times


def test_a_thousand_trickling_connections_do_not_stop_a_well_behaved_client(served: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < SLOW_CLIENTS + 200:
        pytest.skip(f"this test's own process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, SLOW_CLIENTS + 200), hard))
    try:
        times = run_loop(under_slow_clients(served, 4.0))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert max(times) < 1.0, times
    assert len(times) >= 5


@pytest.fixture
def guarded_server(fixture_lessons: Path, tmp_path: Path) -> Iterator[int]:
    """The app under uvicorn in this process, with a request head due within 0.5 s."""
    port = free_port()
    config = uvicorn.Config(
        create_app(Settings(lessons_dir=fixture_lessons, package_cache_dir=tmp_path / "pkgs")),
        host="127.0.0.1",
        port=port,
        http=guarded_protocol(max_connections=100, head_seconds=0.5),
        log_level="warning",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until_up(f"http://127.0.0.1:{port}")
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_request_head_that_never_ends_is_closed(guarded_server: int) -> None:
    async def trickled_until_closed() -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", guarded_server)
        writer.write(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        try:
            for _ in range(40):  # 4 s of a byte every 0.1 s
                await asyncio.sleep(0.1)
                writer.write(b"a")
                await writer.drain()
                if reader.at_eof():
                    return True
            return await asyncio.wait_for(reader.read(), 0.5) == b""
        except OSError:
            return True  # reset by the server
        finally:
            writer.close()

    assert run_loop(trickled_until_closed())


def test_a_well_behaved_keep_alive_client_gets_every_answer(guarded_server: int) -> None:
    async def three_requests() -> list[bytes]:
        reader, writer = await asyncio.open_connection("127.0.0.1", guarded_server)
        answers = []
        for _ in range(3):
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            answers.append(head.split(b"\r\n")[0])
            await asyncio.wait_for(reader.readexactly(2), 5)  # "ok"
            await asyncio.sleep(0.3)  # idle, but less than the head's time
        writer.close()
        return answers

    assert run_loop(three_requests()) == [b"HTTP/1.1 200 OK"] * 3
