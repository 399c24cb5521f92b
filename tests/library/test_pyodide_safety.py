"""The learner library uses nothing Pyodide lacks: no threads, processes, sockets or file writes."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import promptdojo
from promptdojo.pyodide.bundle import LEARNER_MODULES

PACKAGE = Path(promptdojo.__file__).parent
FORBIDDEN_MODULES = {
    "threading",
    "_thread",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "socket",
    "ssl",
    "selectors",
    "signal",
    "ctypes",
    "urllib",
    "http",
    "webbrowser",
}
WRITING_METHODS = {"write_text", "write_bytes", "tofile", "savez", "savez_compressed", "save"}


def learner_sources() -> list[Path]:
    files: list[Path] = []
    for name in LEARNER_MODULES:
        path = PACKAGE / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def problems(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found += [
                f"line {node.lineno}: imports {n}"
                for n in names
                if n and n.split(".")[0] in FORBIDDEN_MODULES
            ]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in WRITING_METHODS:
                found.append(f"line {node.lineno}: writes a file with .{func.attr}()")
            if isinstance(func, ast.Name) and func.id == "open":
                modes = [a for a in node.args[1:2]] + [
                    k.value for k in node.keywords if k.arg == "mode"
                ]
                for mode in modes:
                    if not (isinstance(mode, ast.Constant) and set(str(mode.value)) <= set("rbt")):
                        found.append(f"line {node.lineno}: open() for writing")
    return found


@pytest.mark.parametrize("path", learner_sources(), ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_learner_module_is_pyodide_safe(path: Path) -> None:
    assert problems(path) == []


def test_the_checker_catches_what_it_should(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import threading\nfrom subprocess import run\nopen('x', 'w')\n"
        "from pathlib import Path\nPath('y').write_text('z')\nopen('ok.txt')\n"
    )
    assert problems(bad) == [
        "line 1: imports threading",
        "line 2: imports subprocess",
        "line 3: open() for writing",
        "line 5: writes a file with .write_text()",
    ]
