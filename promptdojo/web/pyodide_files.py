"""What the kernel worker fetches besides the Pyodide core: the bundle, snapshot and packages."""

from __future__ import annotations

import re

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, Response

from promptdojo.pyodide.snapshot import COPIES
from promptdojo.web.accept import accepts
from promptdojo.web.compiled import COMPILED_URL
from promptdojo.web.headers import READ_METHODS
from promptdojo.web.package_store import PackageUnavailableError
from promptdojo.web.site import site_of
from promptdojo.web.staticfiles import IMMUTABLE

BUNDLE_URL = "/bundle"
SNAPSHOT_URL = "/snapshot"
PACKAGES_URL = "/packages"
_WHEEL_NAME = re.compile(r"^[A-Za-z0-9_.+-]+\.(whl|zip|tar)$")

router = APIRouter()


@router.api_route(BUNDLE_URL + "/{filename}", methods=READ_METHODS, include_in_schema=False)
async def learner_bundle(request: Request, filename: str) -> Response:
    """The zipped learner library, under its content hash."""
    bundle = site_of(request).bundle
    if filename != bundle.filename:
        raise HTTPException(404, f"no bundle {filename!r}; the current one is {bundle.filename}")
    return Response(bundle.data, media_type="application/zip", headers={"cache-control": IMMUTABLE})


@router.api_route(SNAPSHOT_URL + "/{filename}", methods=READ_METHODS, include_in_schema=False)
async def memory_snapshot(request: Request, filename: str) -> Response:
    """The memory snapshot the worker restores, or the standard library it was made with, under
    its content hash, sent precompressed."""
    site = site_of(request)
    found = [(s, s.served()[filename]) for s in site.snapshots() if filename in s.served()]
    if not found:
        current = " and ".join(s.filename for s in site.snapshots())
        said = f"this server's are {current}" if current else "this server boots Python cold"
        raise HTTPException(404, f"no snapshot {filename!r}; {said}: reload the page")
    snapshot, path = found[0]
    media_type = "application/zip" if filename.endswith(".zip") else "application/octet-stream"
    accepted = request.headers.get("accept-encoding", "")
    headers = {"cache-control": IMMUTABLE, "vary": "accept-encoding"}
    for encoding, suffix in COPIES:
        copy = snapshot.encoded(suffix, path)
        if accepts(accepted, encoding) and copy.is_file():
            headers["content-encoding"] = encoding
            return FileResponse(copy, media_type=media_type, headers=headers)
    return FileResponse(path, media_type=media_type, headers=headers)


@router.api_route(PACKAGES_URL + "/{filename}", methods=READ_METHODS, include_in_schema=False)
async def package(request: Request, filename: str) -> Response:
    """A Pyodide package wheel: from the release folder, the cache, or fetched once upstream."""
    if not _WHEEL_NAME.match(filename) or filename.startswith("."):
        raise HTTPException(404, f"{filename!r} is not a package file name")
    try:
        path = await site_of(request).packages.get(filename)
    except PackageUnavailableError as exc:
        raise HTTPException(exc.status, str(exc)) from None
    return FileResponse(path, headers={"cache-control": IMMUTABLE})


@router.api_route(COMPILED_URL + "/{filename}", methods=READ_METHODS, include_in_schema=False)
async def compiled_wheel(request: Request, filename: str) -> Response:
    """A wheel with its modules' bytecode (promptdojo.web.compiled), sent precompressed."""
    served = {w.compiled.filename: w for w in site_of(request).compiled.values()}.get(filename)
    if served is None:
        raise HTTPException(404, f"no compiled wheel {filename!r}; the page installs the wheel")
    accepted = request.headers.get("accept-encoding", "")
    headers = {"cache-control": IMMUTABLE, "vary": "accept-encoding"}
    for encoding, _ in COPIES:
        if accepts(accepted, encoding) and encoding in served.copies:
            headers["content-encoding"] = encoding
            return FileResponse(
                served.copies[encoding], media_type="application/zip", headers=headers
            )
    return FileResponse(served.compiled.path, media_type="application/zip", headers=headers)
