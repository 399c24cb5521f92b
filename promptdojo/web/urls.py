"""Every URL a page names, below one base path: ``/`` when served, e.g. ``/course/`` when exported.

The server's routes stay at the root; only the URLs written into pages, the kernel's config and
the service worker carry the base. A static export also names each step as a folder
(``lessons/<id>/<n>/``, written as ``index.html``), which every static host serves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class BaseUrlError(ValueError):
    """The base URL is not a plain path; the message says what a base may be."""


#: One segment of a base path: URL-safe characters only (RFC 3986's unreserved), so a base needs
#: no escaping in a URL, an HTML attribute, a script or a ``_headers`` line.
_SEGMENT = re.compile(r"[A-Za-z0-9_~.-]+")
ALLOWED = (
    "a plain path of URL-safe segments such as /, /course/ or /a-b/c_d/: letters, digits, "
    "'-', '_', '.' and '~' between single slashes (no '..', '%'-escapes, quotes, spaces, "
    "backslashes or host name)"
)


def normalise_base(base: str) -> str:
    """``course`` or ``/course`` becomes ``/course/``; anything but a plain path is refused.

    A base is written into every page, the service worker and ``_headers``: ``\\\\evil.example\\``
    or ``//evil`` would send each URL to another site, a quote would end an attribute, and a
    newline would add rules to ``_headers``.
    """
    if base in ("", "/"):
        return "/"
    if "://" in base:
        raise BaseUrlError(f"--base-url {base!r} must be a path such as /course/, not a full URL")
    segments = base.removeprefix("/").removesuffix("/").split("/")
    if not all(_SEGMENT.fullmatch(part) and part.strip(".") for part in segments):
        raise BaseUrlError(f"--base-url {base!r} must be {ALLOWED}")
    return "/" + "/".join(segments) + "/"


@dataclass(frozen=True)
class Urls:
    """The public URLs of one site: the server's (``static_site=False``) or an export's."""

    base: str = "/"
    static_site: bool = False

    def __post_init__(self) -> None:
        if normalise_base(self.base) != self.base:
            raise BaseUrlError(f"the base URL {self.base!r} is not {ALLOWED}")

    def of(self, path: str) -> str:
        """The public URL of ``path`` (``/assets/x.js`` becomes ``{base}assets/x.js``)."""
        return self.base + path.lstrip("/")

    def step(self, lesson_id: str, number: int) -> str:
        """A step page's URL."""
        return self.of(f"lessons/{lesson_id}/{number}") + ("/" if self.static_site else "")

    def step_pattern(self) -> str:
        """A step page's URL with ``{lesson}`` and ``{step}`` for the page's script to fill."""
        return self.of("lessons/{lesson}/{step}") + ("/" if self.static_site else "")
