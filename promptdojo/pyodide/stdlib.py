"""Pyodide's standard library as pages get it with a snapshot: the same archive, its members stored.

Pyodide's ``python_stdlib.zip`` deflates each module alone (2.4 MB for 0.29.0, 2.5 MB for
314.0.7). Stored, and compressed as a whole on the way (zstd, brotli or gzip, as the snapshot is),
it takes 1.5-1.6 MB in zstd: the compressor sees across modules, which a zip's per-member
deflate cannot. An import from it then inflates nothing either.

The snapshot is made with this archive, and pages that restore it load it in place of Pyodide's
own (``loadPyodide``'s ``stdLibURL``): Python's zip importer keeps every member's offset in the
archive, so a snapshot restores against the archive it was made with, and no other. The archive
is named by its content (``python_stdlib-<hash>.zip``), so a learner's cache never pairs one
snapshot with another's standard library.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

#: The standard library's file in a Pyodide build.
STDLIB = "python_stdlib.zip"
#: Bumped when the stored archive's layout changes (it names the snapshots made with it).
FORMAT = 1


def store_stdlib(source: Path, out: Path) -> None:
    """Write ``source`` (a zip) to ``out`` with every member stored, not deflated: the same
    members in the same order, with the same names, dates and attributes, so the same archive
    always gives the same bytes. Raises :class:`zipfile.BadZipFile` for an archive that is not
    one, and :class:`OSError` for one that cannot be read or written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".tmp", delete=False) as tmp:
        try:
            with zipfile.ZipFile(source) as archive, zipfile.ZipFile(tmp, "w") as stored:
                for member in archive.infolist():
                    copy = zipfile.ZipInfo(member.filename, date_time=member.date_time)
                    copy.compress_type = zipfile.ZIP_STORED
                    copy.create_system = member.create_system
                    copy.external_attr = member.external_attr
                    stored.writestr(copy, archive.read(member))
        except BaseException:
            os.unlink(tmp.name)
            raise
    os.chmod(tmp.name, 0o644)  # as any other file it is served or exported beside
    os.replace(tmp.name, out)


def stored_name(sha256: str) -> str:
    """The stored archive's file name as pages fetch it, by its SHA-256."""
    return f"{STDLIB.removesuffix('.zip')}-{sha256[:16]}.zip"
