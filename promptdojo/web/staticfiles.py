"""Static files under content-hashed or versioned URLs: cached forever, sent precompressed.

Compressed copies are made ahead of time, never per request (the wasm is 9 MB): the front-end
build writes ``name.br`` and ``name.gz`` beside each compressible asset, and an unpacked Pyodide
release (``serve --pyodide-dir``) gets zstd, brotli and gzip copies kept by content
(:mod:`promptdojo.pyodide.compressed`). This picks the best one the browser accepts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from starlette.datastructures import Headers
from starlette.responses import FileResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from promptdojo.pyodide.compressed import CODINGS
from promptdojo.web.accept import accepts

IMMUTABLE = "public, max-age=31536000, immutable"


class ImmutableStaticFiles(StaticFiles):
    """Starlette's path-safe static files, plus long caching and precompressed variants.

    ``copies`` maps a path below the folder to its compressed copies by content coding; a file it
    does not name has its copies looked for beside it (``name.br``, ``name.gz``, ``name.zst``).
    """

    def __init__(
        self,
        *,
        directory: str | os.PathLike[str],
        copies: Mapping[str, Mapping[str, Path]] | None = None,
    ) -> None:
        super().__init__(directory=directory)
        self.copies = copies

    def _copy(self, path: str, coding: str, suffix: str) -> tuple[str, os.stat_result] | None:
        if self.copies is not None and path in self.copies:
            found = self.copies[path].get(coding)
            return (str(found), found.stat()) if found is not None else None
        full_path, stat_result = self.lookup_path(f"{path}.{suffix}")
        return (full_path, stat_result) if stat_result is not None else None

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code != 200 or not isinstance(response, FileResponse):
            return response
        accepted = Headers(scope=scope).get("accept-encoding", "")
        for coding, suffix in CODINGS:
            found = accepts(accepted, coding) and self._copy(path, coding, suffix)
            if not found:
                continue
            variant = FileResponse(
                found[0],
                stat_result=found[1],
                media_type=response.media_type,
                headers={"content-encoding": coding, "vary": "accept-encoding"},
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
