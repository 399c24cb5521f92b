"""What the kernel worker fetches besides the Pyodide core: the learner bundle and packages."""

from __future__ import annotations

import re

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, Response

from promptdojo.web.package_store import PackageUnavailableError
from promptdojo.web.staticfiles import IMMUTABLE

BUNDLE_URL = "/bundle"
PACKAGES_URL = "/packages"
_WHEEL_NAME = re.compile(r"^[A-Za-z0-9_.+-]+\.(whl|zip|tar)$")

router = APIRouter()


@router.get(BUNDLE_URL + "/{filename}", include_in_schema=False)
async def learner_bundle(request: Request, filename: str) -> Response:
    """The zipped learner library, under its content hash."""
    bundle = request.app.state.bundle
    if filename != bundle.filename:
        raise HTTPException(404, f"no bundle {filename!r}; the current one is {bundle.filename}")
    return Response(bundle.data, media_type="application/zip", headers={"cache-control": IMMUTABLE})


@router.get(PACKAGES_URL + "/{filename}", include_in_schema=False)
async def package(request: Request, filename: str) -> Response:
    """A Pyodide package wheel: from the release folder, the cache, or fetched once upstream."""
    if not _WHEEL_NAME.match(filename) or filename.startswith("."):
        raise HTTPException(404, f"{filename!r} is not a package file name")
    try:
        path = await request.app.state.packages.get(filename)
    except PackageUnavailableError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return FileResponse(path, headers={"cache-control": IMMUTABLE})
