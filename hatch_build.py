"""Hatch build hook: make sure the front end is built before the wheel takes ``static/build``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class FrontendBuildHook(BuildHookInterface):
    """Builds ``static/build`` with npm when it is missing, or says exactly what to do."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        if (root / "static" / "build" / "manifest.json").is_file():
            return
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError(
                "static/build is missing and npm is not installed: install Node >= 20 and npm, "
                "then run `npm ci && npm run build` (or `make build`) before building the wheel"
            )
        for command in ([npm, "ci", "--no-audit", "--no-fund"], [npm, "run", "build"]):
            subprocess.run(command, cwd=root, check=True)
