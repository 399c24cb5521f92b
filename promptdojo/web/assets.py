"""The manifest of built assets: maps logical names to content-hashed file names."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"
ASSETS_URL = "/assets"


class AssetsMissingError(RuntimeError):
    """The front end has not been built; the message says how to build it."""


@dataclass(frozen=True)
class AssetManifest:
    """Built assets: ``files`` maps e.g. ``"app.js"`` to ``"app-3F2A9C1B.js"``."""

    root: Path
    files: dict[str, str]
    pyodide_version: str

    @classmethod
    def load(cls, root: Path) -> AssetManifest:
        """Read ``root/manifest.json``, or explain how to produce it."""
        path = root / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AssetsMissingError(
                f"{path} is missing: the front end is not built. "
                "Run `make build` (or `npm ci && npm run build`) in the promptdojo checkout."
            ) from None
        return cls(root=root, files=dict(data["files"]), pyodide_version=data["pyodide_version"])

    def url(self, name: str) -> str:
        """Public URL of the asset ``name``."""
        return f"{ASSETS_URL}/{self.files[name]}"

    @property
    def pyodide_url(self) -> str:
        """Versioned URL of the folder holding the Pyodide core."""
        return f"{ASSETS_URL}/pyodide/{self.pyodide_version}/"

    @property
    def pyodide_dir(self) -> Path:
        """The Pyodide core on disk."""
        return self.root / "pyodide" / self.pyodide_version
