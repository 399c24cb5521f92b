"""HTTP/1.1 message framing over a byte stream, for a proxy that watches and alters what it relays.

A proxy needs more than a parser: it must know where in the raw stream each response's head, body
payload and chunk framing lie, so that it can count the bytes each request costs on the wire, cut a
response after N payload bytes, flip bytes in its body or drop a header, and still relay every
other byte unchanged (keep-alive and pipelined requests included). ``h11`` parses messages but
hides those positions and cannot pipeline as a client, so the framing is done here: status line and
headers, then ``Content-Length``, ``chunked`` or read-until-close.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

#: Requests whose responses carry no body whatever their headers say.
_NO_BODY_METHODS = {"HEAD", "CONNECT"}
_HEAD_END = b"\r\n\r\n"


def parse_head(data: bytes) -> tuple[str, list[tuple[str, str]]]:
    """The first line and the header fields of a message head (without the blank line)."""
    lines = data.decode("latin-1").split("\r\n")
    headers = []
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers.append((name.strip(), value.strip()))
    return lines[0], headers


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    """The value of the first field called ``name`` (any case), or None."""
    return next((v for k, v in headers if k.lower() == name.lower()), None)


@dataclass
class Exchange:
    """One request and its response as they crossed the proxy; times are ``time.time()``."""

    connection: int
    method: str
    path: str
    request_headers: list[tuple[str, str]]
    started: float
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    head_bytes: int = 0
    #: Body bytes on the wire: the payload as sent (compressed or not) plus any chunk framing.
    body_bytes: int = 0
    payload_bytes: int = 0
    complete: bool = False
    #: When the last byte reached the client (the proxy sets it as it relays).
    finished: float | None = None
    #: (time.time() when delivered to the client, bytes) for every piece sent downstream.
    delivered: list[tuple[float, int]] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)

    @property
    def wire_bytes(self) -> int:
        return self.head_bytes + self.body_bytes

    @property
    def content_encoding(self) -> str:
        return header(self.response_headers, "content-encoding") or ""

    def bytes_before(self, moment: float) -> int:
        """Bytes of this exchange delivered to the client at or before ``moment``."""
        return sum(n for t, n in self.delivered if t <= moment)


class RequestStream:
    """Finds the requests in a client's byte stream; each new one goes to ``on_request``."""

    def __init__(self, connection: int, on_request: Callable[[Exchange], None]) -> None:
        self.connection = connection
        self.on_request = on_request
        self.buffer = bytearray()
        self.skip = 0  # request body bytes still to pass
        self.opaque = False  # a request body of unknown length: stop parsing this connection

    def feed(self, data: bytes) -> None:
        if self.opaque:
            return
        self.buffer += data
        while True:
            if self.skip:
                taken = min(self.skip, len(self.buffer))
                del self.buffer[:taken]
                self.skip -= taken
                if self.skip:
                    return
            end = self.buffer.find(_HEAD_END)
            if end < 0:
                return
            first, headers = parse_head(bytes(self.buffer[:end]))
            del self.buffer[: end + 4]
            parts = first.split(" ")
            method, path = (parts[0], parts[1]) if len(parts) >= 2 else (first, "")
            self.on_request(Exchange(self.connection, method, path, headers, time.time()))
            if (header(headers, "transfer-encoding") or "").lower().endswith("chunked"):
                self.opaque = True
                return
            self.skip = int(header(headers, "content-length") or 0)


@dataclass
class Fault:
    """A change to the responses whose path matches ``pattern`` (a regular expression)."""

    kind: str  # "cut", "stall", "corrupt" or "strip-encoding"
    pattern: str
    times: int | None  # how many matching responses it applies to (None: all)
    after: int = 0  # cut, stall: payload bytes sent before the connection closes or stalls
    at: int | None = None  # corrupt: first payload byte flipped (None: the middle)
    count: int = 16  # corrupt: how many bytes are flipped

    def claims(self, path: str) -> bool:
        """Whether it applies to a response for ``path`` (and counts it if so)."""
        if self.times == 0 or not re.search(self.pattern, path):
            return False
        if self.times is not None:
            self.times -= 1
        return True


class ResponseStream:
    """Cuts a server's byte stream into responses, matched in order to ``pending`` requests.

    :meth:`feed` returns the pieces to relay, each with the exchange it belongs to, and whether
    the connection must be closed after them (a "cut" fault), or relay nothing more while it
    stays open (a "stall" fault: :attr:`stalled`).
    """

    def __init__(self, pending: deque[Exchange], faults: Callable[[], list[Fault]]) -> None:
        self.pending = pending
        self.faults = faults
        self.buffer = bytearray()
        self.state = "head"
        self.remaining = 0
        self.exchange: Exchange | None = None
        self.active: list[Fault] = []
        self.stalled = False

    def feed(self, data: bytes) -> tuple[list[tuple[Exchange | None, bytes]], bool]:
        self.buffer += data
        out: list[tuple[Exchange | None, bytes]] = []
        while self.buffer:
            step = getattr(self, "_" + self.state.replace("-", "_"))(out)
            if step == "close":
                return out, True
            if step == "wait":
                break
        return out, False

    def end(self) -> None:
        """The server closed: a body read until close is complete now."""
        if self.state == "until-close" and self.exchange is not None:
            self._finish()

    def _head(self, out: list) -> str | None:
        end = self.buffer.find(_HEAD_END)
        if end < 0:
            return "wait"
        raw = bytes(self.buffer[: end + 4])
        del self.buffer[: end + 4]
        first, headers = parse_head(raw[:end])
        parts = first.split(" ")
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        if 100 <= status < 200:  # an interim response: the final one follows for the same request
            exchange = self.pending[0] if self.pending else None
            out.append((exchange, raw))
            if status == 101:
                self.state = "until-close"
            return None
        exchange = self.pending.popleft() if self.pending else Exchange(-1, "?", "?", [], 0.0)
        exchange.status, exchange.response_headers = status, headers
        self.exchange = exchange
        self.active = [f for f in self.faults() if f.claims(exchange.path)]
        if any(f.kind == "strip-encoding" for f in self.active):
            raw = re.sub(rb"(?im)^content-encoding:[^\r\n]*\r\n", b"", raw)
            exchange.response_headers = [
                (k, v) for k, v in headers if k.lower() != "content-encoding"
            ]
            exchange.faults.append("strip-encoding")
        exchange.head_bytes = len(raw)
        out.append((exchange, raw))
        length = header(headers, "content-length")
        chunked = (header(headers, "transfer-encoding") or "").lower().endswith("chunked")
        if exchange.method in _NO_BODY_METHODS or status in (204, 304):
            self._finish()
        elif chunked:
            self.state = "chunk-size"
        elif length is not None:
            self.remaining = int(length)
            self.state = "body"
            if self.remaining == 0:
                self._finish()
        else:
            self.state = "until-close"
        return None

    def _body(self, out: list) -> str | None:
        piece = bytes(self.buffer[: self.remaining])
        del self.buffer[: len(piece)]
        self.remaining -= len(piece)
        closing = self._payload(out, piece)
        if closing:
            return "close"
        if self.remaining == 0:
            self._finish()
        return None

    def _until_close(self, out: list) -> str | None:
        piece = bytes(self.buffer)
        self.buffer.clear()
        return "close" if self._payload(out, piece) else None

    def _chunk_size(self, out: list) -> str | None:
        end = self.buffer.find(b"\r\n")
        if end < 0:
            return "wait"
        line = bytes(self.buffer[: end + 2])
        del self.buffer[: end + 2]
        self._framing(out, line)
        size = int(line.split(b";")[0].strip() or b"0", 16)
        self.remaining = size
        self.state = "chunk-data" if size else "trailers"
        return None

    def _chunk_data(self, out: list) -> str | None:
        piece = bytes(self.buffer[: self.remaining])
        del self.buffer[: len(piece)]
        self.remaining -= len(piece)
        if self._payload(out, piece):
            return "close"
        if self.remaining == 0:
            self.state, self.remaining = "chunk-end", 2
        return None

    def _chunk_end(self, out: list) -> str | None:
        piece = bytes(self.buffer[: self.remaining])
        del self.buffer[: len(piece)]
        self.remaining -= len(piece)
        self._framing(out, piece)
        if self.remaining == 0:
            self.state = "chunk-size"
        return None

    def _trailers(self, out: list) -> str | None:
        end = self.buffer.find(b"\r\n")
        if end < 0:
            return "wait"
        line = bytes(self.buffer[: end + 2])
        del self.buffer[: end + 2]
        self._framing(out, line)
        if line == b"\r\n":
            self._finish()
        return None

    def _framing(self, out: list, piece: bytes) -> None:
        assert self.exchange is not None
        self.exchange.body_bytes += len(piece)
        out.append((self.exchange, piece))

    def _payload(self, out: list, piece: bytes) -> bool:
        """Relay body payload, with the faults applied; True when the connection must close."""
        exchange = self.exchange
        assert exchange is not None
        offset = exchange.payload_bytes
        for fault in self.active:
            if fault.kind == "corrupt":
                length = header(exchange.response_headers, "content-length")
                at = fault.at if fault.at is not None else int(length or 8192) // 2
                lo, hi = max(at - offset, 0), min(at + fault.count - offset, len(piece))
                if lo < hi:
                    flipped = bytes(b ^ 0xFF for b in piece[lo:hi])
                    piece = piece[:lo] + flipped + piece[hi:]
                    if "corrupt" not in exchange.faults:
                        exchange.faults.append("corrupt")
        stop = next((f for f in self.active if f.kind in ("cut", "stall")), None)
        if stop is not None and offset + len(piece) >= stop.after:
            piece = piece[: max(stop.after - offset, 0)]
            exchange.faults.append(stop.kind)
            self.stalled = stop.kind == "stall"
            self._framing(out, piece)
            exchange.payload_bytes += len(piece)
            return True
        self._framing(out, piece)
        exchange.payload_bytes += len(piece)
        return False

    def _finish(self) -> None:
        assert self.exchange is not None
        self.exchange.complete = True
        self.exchange = None
        self.active = []
        self.state = "head"
