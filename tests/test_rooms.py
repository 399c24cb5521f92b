"""The three rooms stay apart: the learner library imports only numpy and the standard library."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import promptdojo
from promptdojo.bundle import LEARNER_MODULES

PACKAGE = Path(promptdojo.__file__).parent
ALLOWED_THIRD_PARTY = {"numpy"}


def _learner_sources() -> list[Path]:
    files: list[Path] = []
    for name in LEARNER_MODULES:
        path = PACKAGE / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else []
    return files


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_learner_library_imports_only_numpy_stdlib_and_itself() -> None:
    sources = _learner_sources()
    assert PACKAGE / "kernel.py" in sources
    for path in sources:
        extra = _imported_roots(path) - sys.stdlib_module_names - ALLOWED_THIRD_PARTY
        assert extra <= {"promptdojo"}, f"{path.name} imports {sorted(extra)}"


def test_learner_library_does_not_import_other_rooms() -> None:
    for path in _learner_sources():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(
                    ("promptdojo.web", "promptdojo.course", "promptdojo.checking", "promptdojo.cli")
                ), f"{path.name} imports {node.module}"


def test_import_promptdojo_loads_neither_fastapi_nor_numpy() -> None:
    code = (
        "import sys, promptdojo; print(sorted(m for m in ('fastapi', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_authoring_room_does_not_import_the_web_server() -> None:
    code = (
        "import sys, promptdojo.course.parse, promptdojo.checking.steprun; "
        "print('fastapi' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
