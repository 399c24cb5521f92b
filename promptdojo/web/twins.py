"""The static export's compressed twins: a compressed copy beside each big file, decoded by pages.

Static hosts mostly send binary files as they are (``python -m http.server`` compresses nothing,
others skip ``application/wasm`` and ``application/octet-stream``, CloudFront skips files over
10 MB), so a server's ``Accept-Encoding`` choice cannot be counted on. The export writes
``name.zst`` beside Pyodide's WebAssembly, the snapshot and the compiled wheels (decoded as they
arrive by the kernel and download workers, ``static/js/shared/twins.js``), and ``name.gz`` beside
the loaders and assets (decoded by the browser's own ``DecompressionStream``, in the workers and
the service worker). A twin is a format no host compresses again, and the page passes on one that
a host decoded on the way. ``promptdojo serve`` needs none: it sends the same copies by
``Accept-Encoding``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from promptdojo.pyodide.compressed import compressible, copies
from promptdojo.pyodide.release import COMMON_FILES, LOADERS
from promptdojo.web.pyodide_files import SNAPSHOT_URL

if TYPE_CHECKING:
    from promptdojo.web.site import Site

#: The twin's coding by file suffix: zstd for the big binary files (smallest, decoded by the
#: reference decoder's WebAssembly), gzip for the rest (every browser decodes it natively).
ZSTD_SUFFIXES = (".wasm",)
#: Assets the pages never load from the export (live reload; the worker is written per export).
_NOT_EXPORTED = ("live.js", "sw.js")


@dataclass(frozen=True)
class Twin:
    """A file's compressed twin: its URL path (below the base), coding, and bytes on disk."""

    url: str
    coding: str
    source: Path


def _twin(url: str, path: Path, cache_dir: Path) -> Twin | None:
    coding = "zstd" if url.endswith(ZSTD_SUFFIXES) else "gzip"
    found = copies(path, cache_dir).get(coding)
    if found is None:
        return None
    return Twin(url=f"{url}.{'zst' if coding == 'zstd' else 'gz'}", coding=coding, source=found)


def export_twins(site: Site, cache_dir: Path) -> dict[str, Twin]:
    """Twins of the files an exported page fetches, by each file's URL path (below the base)."""
    files: dict[str, Path] = {}
    core = Path(site.core_dir)
    for name in (*COMMON_FILES, *LOADERS):
        if (core / name).is_file() and compressible(name):
            files[site.pyodide_url + name] = core / name
    manifest = site.manifest
    for name, built in manifest.files.items():
        if name not in _NOT_EXPORTED:
            files[manifest.url(name)] = manifest.root / built
    twins = {url: twin for url, path in files.items() if (twin := _twin(url, path, cache_dir))}
    for snapshot in site.snapshots():  # each snapshot, and the standard library it was made with
        for name, path in snapshot.served().items():
            if snapshot.encoded("zst", path).is_file():
                url = f"{SNAPSHOT_URL}/{name}"
                twins[url] = Twin(f"{url}.zst", "zstd", snapshot.encoded("zst", path))
    for served in site.compiled.values():  # compiled wheels (web.compiled)
        if "zstd" in served.copies:
            twins[served.url] = Twin(f"{served.url}.zst", "zstd", served.copies["zstd"])
    return twins


def twins_config(twins: dict[str, Twin], url: object) -> dict[str, list[str]]:
    """The twins as the page's JavaScript takes them: ``{file URL: [twin URL, coding]}``."""
    return {url(path): [url(twin.url), twin.coding] for path, twin in sorted(twins.items())}
