"""Static files under content-hashed or versioned URLs: cached forever, sent precompressed.

The build writes ``name.br`` and ``name.gz`` beside each compressible asset; this picks the best
one the browser accepts and never compresses per request (the wasm is 9 MB).
"""

from __future__ import annotations

import os
from typing import ClassVar

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from promptdojo.web.accept import accepts

IMMUTABLE = "public, max-age=31536000, immutable"


class ImmutableStaticFiles(StaticFiles):
    """Starlette's path-safe static files, plus long caching and precompressed variants."""

    ENCODINGS: ClassVar[tuple[tuple[str, str], ...]] = (("br", ".br"), ("gzip", ".gz"))

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code != 200 or not isinstance(response, FileResponse):
            return response
        accepted = Headers(scope=scope).get("accept-encoding", "")
        for encoding, suffix in self.ENCODINGS:
            if not accepts(accepted, encoding):
                continue
            full_path, stat_result = self.lookup_path(path + suffix)
            if stat_result is None:
                continue
            variant = FileResponse(
                full_path,
                stat_result=stat_result,
                media_type=response.media_type,
                headers={"content-encoding": encoding, "vary": "accept-encoding"},
            )
            variant.headers["cache-control"] = IMMUTABLE
            return variant
        response.headers["vary"] = "accept-encoding"
        return response

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers["cache-control"] = IMMUTABLE
        return response
