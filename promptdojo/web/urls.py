"""Every URL a page names, below one base path: ``/`` when served, e.g. ``/course/`` when exported.

The server's routes stay at the root; only the URLs written into pages, the kernel's config and
the service worker carry the base. A static export also names each step as a folder
(``lessons/<id>/<n>/``, written as ``index.html``), which every static host serves.
"""

from __future__ import annotations

from dataclasses import dataclass


class BaseUrlError(ValueError):
    """The base URL is not an absolute path; the message shows a good one."""


def normalise_base(base: str) -> str:
    """``course`` or ``/course`` becomes ``/course/``; a base must be a path, not a full URL."""
    base = base.strip() or "/"
    if "://" in base or "?" in base or "#" in base:
        raise BaseUrlError(f"--base-url {base!r} must be a path such as /course/, not a full URL")
    return "/" + base.strip("/") + "/" if base.strip("/") else "/"


@dataclass(frozen=True)
class Urls:
    """The public URLs of one site: the server's (``static_site=False``) or an export's."""

    base: str = "/"
    static_site: bool = False

    def of(self, path: str) -> str:
        """The public URL of ``path`` (``/assets/x.js`` becomes ``{base}assets/x.js``)."""
        return self.base + path.lstrip("/")

    def step(self, lesson_id: str, number: int) -> str:
        """A step page's URL."""
        return self.of(f"lessons/{lesson_id}/{number}") + ("/" if self.static_site else "")
