"""A Pyodide release's ``pyodide-lock.json``: which package provides which import, and its wheel.

A copy of the pinned release's lock ships inside the package (``pyodide-lock.json`` next to this
module), so validating lessons never depends on a front-end build.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: The Pyodide release the front end pins (``package.json``) and the browser runs.
PYODIDE_VERSION = "314.0.7"
#: The fields of a lock entry the page and the Node runner need to install its wheel (wheels.js).
WHEEL_KEYS = ("name", "file_name", "sha256", "install_dir")
#: The pinned release's lock file, shipped with the package.
PINNED_LOCK = Path(__file__).resolve().parent / "pyodide-lock.json"


class PackageError(RuntimeError):
    """A package could not be fetched or failed its hash; the message says which and why."""


@dataclass(frozen=True)
class Lock:
    """The packages of one Pyodide release, from its ``pyodide-lock.json``."""

    version: str
    packages: dict[str, dict]

    @classmethod
    def read(cls, core_dir: Path, version: str | None = None) -> Lock:
        """Read the lock file in the Pyodide core folder ``core_dir`` (named for its version)."""
        return cls.from_file(core_dir / "pyodide-lock.json", version or core_dir.name)

    @classmethod
    def from_file(cls, path: Path, version: str) -> Lock:
        """Read the lock file at ``path``, for the release ``version``."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(version=version, packages=data["packages"])

    @classmethod
    def pinned(cls) -> Lock:
        """The pinned release's lock, as shipped with the package."""
        return cls.from_file(PINNED_LOCK, PYODIDE_VERSION)

    def package_for_import(self, module: str) -> str | None:
        """The package whose wheel provides the top-level ``module``, if any."""
        for name, entry in self.packages.items():
            if module in entry.get("imports", ()):
                return name
        return None

    def with_dependencies(self, names: Iterable[str]) -> list[str]:
        """``names`` plus everything they depend on, sorted."""
        seen: set[str] = set()
        pending = [n.lower() for n in names]
        while pending:
            name = pending.pop()
            if name in seen:
                continue
            if name not in self.packages:
                raise PackageError(f"{name} is not a package of Pyodide {self.version}")
            seen.add(name)
            pending += self.packages[name]["depends"]
        return sorted(seen)

    def install_order(self, names: Iterable[str]) -> list[dict]:
        """The lock entries of ``names`` and their dependencies, each after all it depends on."""
        done: dict[str, dict] = {}

        def visit(name: str) -> None:
            if name in done:
                return
            for dependency in self.packages[name]["depends"]:
                visit(dependency)
            done[name] = self.packages[name]

        for name in self.with_dependencies(names):
            visit(name)
        return list(done.values())

    def wheel_job(self, names: Iterable[str], folder: Path) -> list[dict]:
        """What the Node runner needs to install ``names`` from the wheels in ``folder``."""
        return [
            wheel_entry(entry, path=str(folder / entry["file_name"]))
            for entry in self.install_order(names)
        ]


def wheel_entry(entry: dict, **where: str) -> dict:
    """The fields of the lock ``entry`` that wheels.js needs to install its wheel, and ``where``
    it is (``url`` for the page, ``path`` for the Node runner)."""
    return {key: entry.get(key) for key in WHEEL_KEYS} | where
