"""The compiled wheels pages install in place of the wheels, and the compiled learner bundle
pages unpack in place of the bundle (:mod:`promptdojo.pyodide.bytecode`).

Made when the server starts, for the wheels it has on hand of the packages the lessons declare,
beside the memory snapshot; sent compressed by ``Accept-Encoding`` (copies made once per content,
as for Pyodide's own big files), and written into an export with a zstd twin. Without a snapshot
cache, a compressed-copy cache or Node, there are none, and pages install the wheels.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from promptdojo.kernel_warm_up import WARM_UP, WARM_UP_NUMPY
from promptdojo.pyodide.bundle import LearnerBundle, build_bundle
from promptdojo.pyodide.bytecode import (
    CompiledWheel,
    CompiledWheelError,
    compiled_bundle,
    ensure_compiled,
)
from promptdojo.pyodide.compressed import copies
from promptdojo.pyodide.dist import PyodideUnavailableError

if TYPE_CHECKING:
    from promptdojo.web.settings import Settings
    from promptdojo.web.site import Site

log = logging.getLogger("promptdojo.web")

#: Where compiled wheels are served, below the packages (immutable, as the wheels are).
COMPILED_URL = "/packages/compiled"


@dataclass(frozen=True)
class ServedWheel:
    """A compiled wheel and its compressed copies, by HTTP content coding."""

    compiled: CompiledWheel
    copies: dict[str, Path]

    @property
    def url(self) -> str:
        """Its URL path, below the site's base."""
        return f"{COMPILED_URL}/{self.compiled.filename}"


def compiled_wheels(settings: Settings, core: Path, site: Site) -> dict[str, ServedWheel]:
    """The compiled wheels of the course's packages, by the file name of their wheel."""
    if settings.snapshot_cache_dir is None or settings.compressed_cache_dir is None:
        return {}
    declared = site.catalog.declared_packages()
    wheels = site.packages.on_hand_paths(declared)
    if not wheels:
        return {}
    # What the page runs before "ready": the packages' imports, then the kernel's warm-up.
    numpy = any(entry["name"] == "numpy" for entry, _ in wheels)
    exercise = WARM_UP + (WARM_UP_NUMPY if numpy else "")
    try:
        made = ensure_compiled(core, wheels, Path(settings.snapshot_cache_dir), exercise)
    except (CompiledWheelError, PyodideUnavailableError) as exc:
        log.warning("%s; pages will install the wheels without bytecode", exc)
        return {}
    served = {}
    for wheel, compiled in made.items():
        served[wheel] = ServedWheel(compiled, copies(compiled.path, settings.compressed_cache_dir))
        log.info("compiled wheel %s: %d modules", compiled.filename, compiled.modules)
    return served


def compiled_entry(served: ServedWheel | None, url: object) -> dict:
    """What a wheel's kernel config adds for its compiled wheel (static/js/kernel/downloads.js)."""
    if served is None:
        return {}
    compiled = served.compiled
    return {
        "compiled": {
            "url": url(served.url),
            "file_name": compiled.filename,
            "sha256": compiled.sha256,
            # Bytes: the learner bundle's download starts once nine tenths have come.
            "size": compiled.path.stat().st_size,
        }
    }


def learner_bundles(settings: Settings, core: Path) -> tuple[LearnerBundle, LearnerBundle]:
    """The learner bundle, and the one pages get: the same with its modules' bytecode, made by
    ``core``'s Python beside the snapshots (or the bundle itself, without a snapshot cache or
    Node). The snapshot is made with the first: the modules it holds are the same either way."""
    bundle = build_bundle()
    if settings.snapshot_cache_dir is None:
        return bundle, bundle
    try:
        compiled = compiled_bundle(core, bundle, Path(settings.snapshot_cache_dir))
    except (CompiledWheelError, PyodideUnavailableError, OSError) as exc:
        log.warning("%s; pages will compile the learner library themselves", exc)
        return bundle, bundle
    log.info("learner bundle %s: with its modules' bytecode", compiled.filename)
    return bundle, compiled
