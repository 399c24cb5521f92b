"""Server figures: step-page throughput and latency against a hello-world route, and a load run.

    python bench/server.py

A real uvicorn (`promptdojo serve`) on loopback; the load comes from a separate process of
asyncio clients on keep-alive connections. Every run is bounded in time and in requests.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, save
from tests.e2e.conftest import start_server, stop_server

STEP = "/lessons/decoding-kv-cache-quantization/1"
HELLO = "/healthz"


async def _client(host: str, port: int, path: str, deadline: float, cap: int, out: dict) -> None:
    request = f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    reader = writer = None
    while time.perf_counter() < deadline and out["done"] < cap:
        try:
            if writer is None:
                reader, writer = await asyncio.open_connection(host, port)
            start = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            out["latencies"].append(time.perf_counter() - start)
            out["done"] += 1
            if status != 200:
                out["errors"] += 1
        except (OSError, asyncio.IncompleteReadError, ValueError):
            out["errors"] += 1
            out["done"] += 1
            writer = None
    if writer is not None:
        writer.close()


def _load(args: tuple[str, int, str, int, float, int]) -> dict:
    host, port, path, clients, seconds, cap = args

    async def main() -> dict:
        out = {"latencies": [], "errors": 0, "done": 0}
        deadline = time.perf_counter() + seconds
        start = time.perf_counter()
        await asyncio.gather(
            *(_client(host, port, path, deadline, cap, out) for _ in range(clients))
        )
        out["elapsed"] = time.perf_counter() - start
        return out

    return asyncio.run(main())


def measure(port: int, path: str, clients: int, seconds: float, cap: int = 200_000) -> dict:
    """Requests per second, p50 and p99 latency (ms) and errors, from a separate process."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        out = pool.apply(_load, (("127.0.0.1", port, path, clients, seconds, cap),))
    latencies = sorted(out["latencies"])
    p99 = latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else 0.0
    return {
        "rps": round(len(latencies) / out["elapsed"], 1),
        "p50_ms": round(1000 * statistics.median(latencies), 2) if latencies else None,
        "p99_ms": round(1000 * p99, 2),
        "requests": out["done"],
        "errors": out["errors"],
    }


def main() -> None:
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(ROOT / "lessons", Path(tmp), "--log-level", "warning")
        port = int(server.url.rsplit(":", 1)[1])
        try:
            measure(port, STEP, 4, 1.0)  # warm up: first render, imports
            for clients in (1, 16, 64):
                hello = measure(port, HELLO, clients, 5.0)
                step = measure(port, STEP, clients, 5.0)
                ratio = round(step["rps"] / hello["rps"], 2)
                figures[f"c{clients}"] = {"hello": hello, "step": step, "rps_ratio": ratio}
                print(f"{clients:3} clients: hello {hello}, step {step}, ratio {ratio}", flush=True)
            load = measure(port, STEP, 200, 20.0, cap=2_000_000)
            figures["load_200_clients_20s"] = load
            print(f"load: {load}", flush=True)
        finally:
            stop_server(server)
    save("server", figures, "python bench/server.py")


if __name__ == "__main__":
    main()
