"""The learner library's reference at ``/reference/``: pdoc's pages, made from its docstrings.

Nothing here is written by hand: pdoc renders every module a learner imports, and each display
helper's page shows the picture its own docstring example draws (run at build time, saved as an
SVG beside the pages). The pages are made once per server start or export, on first use, and kept
by the digest of the library's sources and pdoc's version; a request only looks them up.

The app's Content-Security-Policy (``promptdojo.web.headers``) allows no inline script, so pdoc
is configured without the features that need one: search (an inline loader and a generated
index), math and mermaid (inline set-up, scripts from a CDN) and live reload. What is left is
plain HTML with pdoc's inline ``<style>``, which the policy's ``style-src`` already allows; one
policy for the whole site stays simpler and stricter than a second, looser one for this path.
"""

from __future__ import annotations

import contextlib
import doctest
import hashlib
import importlib
import io
import posixpath
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from promptdojo.web.headers import READ_METHODS
from promptdojo.web.site import site_of

#: Where the reference is served and exported, below the base URL.
REFERENCE_URL = "/reference"
#: Every module a learner imports, as the reference lists them.
LIBRARY = (
    "promptdojo.display",
    "promptdojo.decoding",
    "promptdojo.kvcache",
    "promptdojo.kvconfig",
    "promptdojo.kvmemory",
    "promptdojo.quantization",
    "promptdojo.tinylm",
    "promptdojo.ui",
    "promptdojo.serving",
)
#: The display helpers' pictures, below the reference's folder.
PICTURES = "pictures"
#: pdoc's ``custom.css`` and page template, at the accessibility the lessons keep.
THEME = Path(__file__).with_name("reference_theme")
#: Content types of the reference's files, by suffix.
MEDIA_TYPES = {".html": "text/html; charset=utf-8", ".svg": "image/svg+xml"}


class ReferenceBuildError(RuntimeError):
    """The reference cannot be made; the message names the docstring to fix."""


def _sources() -> list[Path]:
    """The library's source files, in a stable order."""
    files: list[Path] = []
    for name in LIBRARY:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ReferenceBuildError(f"{name} is not importable: reinstall promptdojo")
        origin = Path(spec.origin)
        files += sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
    return files


def source_digest() -> str:
    """What the reference depends on: the library's sources and pdoc's version."""
    digest = hashlib.sha256(f"pdoc {version('pdoc')}\0".encode())
    for path in sorted(THEME.iterdir()):
        digest.update(path.read_bytes())
    for path in _sources():
        digest.update(f"{path.name}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _helpers() -> dict[str, Callable[..., Any]]:
    """The display helpers: every function ``promptdojo.display`` exports."""
    display = importlib.import_module("promptdojo.display")
    return {
        name: getattr(display, name)
        for name in display.__all__
        if callable(getattr(display, name)) and not isinstance(getattr(display, name), type)
    }


def picture(name: str, helper: Callable[..., Any]) -> str:
    """The SVG the last figure drawn by ``helper``'s docstring example, run as doctest does."""
    drawn: list[Any] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        figure = helper(*args, **kwargs)
        drawn.append(figure)
        return figure

    module = importlib.import_module(helper.__module__)
    namespace = {**vars(module), name: recording}
    examples = doctest.DocTestParser().get_examples(helper.__doc__ or "")
    with contextlib.redirect_stdout(io.StringIO()):
        for example in examples:
            exec(compile(example.source, f"<{name} example>", "exec"), namespace)
    if not drawn:
        raise ReferenceBuildError(
            f"{helper.__module__}.{name}: its docstring needs an example (>>> lines) that calls "
            f"{name}, so that the reference can show the picture it draws"
        )
    return drawn[-1]._repr_svg_()


def _page_path(module_name: str) -> str:
    """Where pdoc puts a module's page: ``promptdojo.display`` is ``promptdojo/display.html``."""
    return module_name.replace(".", "/") + ".html"


def build() -> dict[str, bytes]:
    """Every file of the reference, by its path below :data:`REFERENCE_URL`."""
    import pdoc.doc
    import pdoc.extract
    import pdoc.render

    # See the module docstring: no feature that needs an inline script.
    pdoc.render.configure(
        docformat="google",
        search=False,
        math=False,
        mermaid=False,
        show_source=False,
        # An empty icon: no request for /favicon.ico, which the server does not have.
        favicon="data:,",
        template_directory=THEME,
    )
    modules = {name: pdoc.doc.Module.from_name(name) for name in pdoc.extract.walk_specs(LIBRARY)}
    files: dict[str, bytes] = {}
    helpers = _helpers()
    for name, helper in helpers.items():
        files[f"{PICTURES}/{name}.svg"] = picture(name, helper).encode()
    for module_name, module in modules.items():
        page = _page_path(module_name)
        for member in module.members.values():
            if isinstance(member, pdoc.doc.Function) and helpers.get(member.name) is member.obj:
                src = posixpath.relpath(f"{PICTURES}/{member.name}.svg", posixpath.dirname(page))
                # pdoc keeps the docstring it read as a cached property; the picture goes after.
                member.__dict__["docstring"] = (
                    f"{member.docstring}\n\n![What the example of {member.name} draws]({src})\n"
                )
        files[page] = pdoc.render.html_module(module, modules).encode()
    files["index.html"] = pdoc.render.html_index(modules).encode()
    return files


#: Made references by :func:`source_digest`, shared by every app of this process.
_BUILT: dict[str, dict[str, bytes]] = {}
_BUILDING = threading.Lock()


@dataclass
class Reference:
    """One app's reference: made (or found by its digest) on first use, then kept as it is."""

    _files: dict[str, bytes] | None = None

    def files(self) -> dict[str, bytes]:
        """Every file, by its path below :data:`REFERENCE_URL`."""
        if self._files is None:
            with _BUILDING:
                digest = source_digest()
                if digest not in _BUILT:
                    _BUILT.clear()
                    _BUILT[digest] = build()
                self._files = _BUILT[digest]
        return self._files

    def file(self, path: str) -> tuple[bytes, str] | None:
        """The file at ``path`` (``""`` is the index) and its content type, or ``None``."""
        path = path or "index.html"
        found = self.files().get(path)
        if found is None:
            return None
        return found, MEDIA_TYPES[posixpath.splitext(path)[1]]


router = APIRouter()


@router.api_route(REFERENCE_URL, methods=READ_METHODS, include_in_schema=False)
async def reference_root(request: Request) -> RedirectResponse:
    """The index's relative links need the trailing slash."""
    return RedirectResponse(site_of(request).urls.of(REFERENCE_URL + "/"), status_code=308)


@router.api_route(REFERENCE_URL + "/{path:path}", methods=READ_METHODS, include_in_schema=False)
async def reference_file(request: Request, path: str) -> Response:
    """A page or picture of the reference; the first request of a server waits for the build."""
    reference: Reference = site_of(request).reference
    found = await run_in_threadpool(reference.file, path)
    if found is None:
        raise HTTPException(404, f"the reference has no {path}; its index is at {REFERENCE_URL}/")
    body, media_type = found
    return Response(body, media_type=media_type, headers={"cache-control": "no-cache"})
