"""Security and isolation headers on every response.

Cross-origin isolation (COOP + COEP) gives the page ``SharedArrayBuffer``, which the kernel's
interrupt buffer needs. The CSP allows one inline script, by its hash (the step page's early
script, ``promptdojo.web.isolation``); ``wasm-unsafe-eval`` lets Pyodide compile WebAssembly.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from promptdojo.web.isolation import ISOLATION_SCRIPT_SOURCE

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        f"script-src 'self' 'wasm-unsafe-eval' {ISOLATION_SCRIPT_SOURCE}",
        "worker-src 'self'",
        "connect-src 'self'",
        # CodeMirror injects its theme as <style> elements.
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

#: The methods of every route that serves something: HEAD wherever GET.
READ_METHODS = ["GET", "HEAD"]
#: Error responses are never stored: a 404 or 502 must not outlive its cause in a cache.
NO_STORE = "no-store"

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-embedder-policy", b"require-corp"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


class SecurityHeadersMiddleware:
    """Pure ASGI middleware that adds :data:`SECURITY_HEADERS` to every HTTP response, and
    ``Cache-Control: no-store`` to every error response (status 400 and above)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if message["status"] >= 400:
                    headers = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                    headers.append((b"cache-control", NO_STORE.encode()))
                present = {name for name, _ in headers}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message["headers"] = [*headers, *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
