"""``--pyodide-dir``: both release layouts are accepted, and the version is read right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptdojo.pyodide.release import COMMON_FILES, Release, ReleaseError


def release_folder(tmp_path: Path, loader: str, version: str | None = "0.29.0") -> Path:
    folder = tmp_path / "pyodide"
    folder.mkdir()
    for name in (*COMMON_FILES, loader):
        (folder / name).write_text("")
    # What pyodide.mjs really holds, minified: an Emscripten version string may come first.
    declared = f'var X="{version}";' if version else ""
    (folder / "pyodide.mjs").write_text(f'const e="4.0.9 emscripten";{declared}function k(e){{}}')
    return folder


@pytest.mark.parametrize("loader", ["pyodide.asm.mjs", "pyodide.asm.js"])
def test_both_layouts_are_releases(tmp_path: Path, loader: str) -> None:
    release = Release.open(release_folder(tmp_path, loader))
    assert release.version == "0.29.0"
    assert release.url == "/pyodide/0.29.0/"


def test_package_json_names_the_version_before_the_lock_or_the_folder(tmp_path: Path) -> None:
    folder = release_folder(tmp_path, "pyodide.asm.js", version=None)
    # 0.29.0's lock says 0.28.0.dev0 in its info block: never the source of the version.
    (folder / "pyodide-lock.json").write_text(json.dumps({"info": {"version": "0.28.0.dev0"}}))
    (folder / "package.json").write_text(json.dumps({"name": "pyodide", "version": "0.29.0"}))
    assert Release.open(folder).version == "0.29.0"


def test_a_folder_without_a_loader_names_both_files(tmp_path: Path) -> None:
    folder = release_folder(tmp_path, "pyodide.asm.js")
    (folder / "pyodide.asm.js").unlink()
    with pytest.raises(ReleaseError, match=r"lacks pyodide\.asm\.mjs or pyodide\.asm\.js\. Unpack"):
        Release.open(folder)


def test_an_unknown_version_is_an_error_not_a_guess(tmp_path: Path) -> None:
    folder = release_folder(tmp_path, "pyodide.asm.mjs", version=None)
    with pytest.raises(ReleaseError, match="cannot tell the Pyodide version"):
        Release.open(folder)
