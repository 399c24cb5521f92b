"""Every module that runs inside Pyodide is Pyodide-safe, and needs only modules that are too.

Two sets run there: the learner bundle (the browser's kernel, :data:`LEARNER_MODULES`) and the
judge that ``check --pyodide`` mounts (:data:`IN_PYODIDE`). The rule itself lives with the learner
library's tests (``tests/library/test_pyodide_safety.py``); this test applies it to both sets.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import promptdojo
from promptdojo.checking.backends.pyodide import IN_PYODIDE
from promptdojo.pyodide.bundle import LEARNER_MODULES
from tests.library.test_pyodide_safety import problems

PACKAGE = Path(promptdojo.__file__).parent


def _files(names: tuple[str, ...]) -> list[Path]:
    files: list[Path] = []
    for name in names:
        path = PACKAGE / name
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


RUNS_IN_PYODIDE = sorted(set(_files(LEARNER_MODULES)) | set(_files(IN_PYODIDE)))


def _top_level_imports(path: Path) -> set[str]:
    """Our modules ``path`` imports when it loads (imports inside functions load later, if ever)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n for n in names if n.startswith("promptdojo.")}
    return found


def _path_of(module: str) -> Path:
    parts = module.split(".")[1:]
    package = PACKAGE.joinpath(*parts)
    return package / "__init__.py" if package.is_dir() else package.with_suffix(".py")


@pytest.mark.parametrize("path", RUNS_IN_PYODIDE, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_module_that_runs_in_pyodide_is_safe(path: Path) -> None:
    assert problems(path) == []


@pytest.mark.parametrize("path", RUNS_IN_PYODIDE, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_it_imports_only_modules_that_run_in_pyodide(path: Path) -> None:
    needed = {_path_of(m) for m in _top_level_imports(path)}
    assert needed <= set(RUNS_IN_PYODIDE), sorted(str(p) for p in needed - set(RUNS_IN_PYODIDE))


def test_the_judge_and_the_kernel_are_covered() -> None:
    covered = {p.relative_to(PACKAGE).as_posix() for p in RUNS_IN_PYODIDE}
    assert {"kernel.py", "checking/judge.py", "checking/backends/pyodide_step.py"} <= covered
