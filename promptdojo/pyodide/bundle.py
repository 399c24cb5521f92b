"""The learner bundle: the Pyodide-safe part of the installed package, zipped and content-hashed.

The browser worker downloads it once, unpacks it and puts it on ``sys.path``, so cells can
``import promptdojo.<module>``. Only the learner room goes in: no web server, no authoring tools.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import promptdojo

#: Modules and sub-packages of the learner room, relative to the ``promptdojo`` package folder.
LEARNER_MODULES: tuple[str, ...] = (
    "__init__.py",
    "kernel.py",
    "kernel_warm_up.py",
    "ui.py",
    "decoding",
    "kvcache.py",
    "kvconfig.py",
    "kvmemory.py",
    "serving",
    "quantization",
    "display",
    "tinylm",
)

#: A fixed timestamp, so the same sources always give the same bytes and the same hash.
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class LearnerBundle:
    """The zipped learner library and its content hash."""

    data: bytes
    digest: str
    files: tuple[str, ...]

    @property
    def filename(self) -> str:
        """Content-hashed name, safe to cache forever."""
        return f"promptdojo-{self.digest}.zip"


def _learner_files(package_dir: Path) -> list[Path]:
    files: list[Path] = []
    for name in LEARNER_MODULES:
        path = package_dir / name
        if path.is_dir():
            files += sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
            )
        elif path.is_file():
            files.append(path)
    return files


def build_bundle(package_dir: Path | None = None) -> LearnerBundle:
    """Zip the learner modules of the package in ``package_dir`` (default: the installed one)."""
    package_dir = package_dir or Path(promptdojo.__file__).resolve().parent
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in _learner_files(package_dir):
            name = "promptdojo/" + path.relative_to(package_dir).as_posix()
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    return bundle_from(buffer.getvalue())


def bundle_from(data: bytes) -> LearnerBundle:
    """The bundle whose zip is ``data`` (a compiled bundle, say): its hash and its members'
    names. Raises :class:`zipfile.BadZipFile` when ``data`` is no zip."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = tuple(info.filename for info in archive.infolist())
    return LearnerBundle(data=data, digest=hashlib.sha256(data).hexdigest()[:16], files=names)
