"""The rooms of ``promptdojo/`` and the one direction imports run between them.

Each module belongs to one room; a room may import only the rooms its row of :data:`ALLOWED`
names. Lower rooms never import higher ones, so there are no loops between packages.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import promptdojo
from promptdojo.pyodide.bundle import LEARNER_MODULES

PACKAGE = Path(promptdojo.__file__).parent
ALLOWED_THIRD_PARTY = {"numpy"}

#: Which rooms each room may import (its own room always included).
ALLOWED: dict[str, set[str]] = {
    "cli": {"web", "checking", "course", "pyodide", "kernel", "learner"},
    "web": {"course", "pyodide", "kernel", "learner"},
    "checking": {"course", "pyodide", "kernel"},
    # course reads cells' controls with the kernel's own rules (promptdojo.ui), to validate them.
    "course": {"pyodide", "kernel"},
    "pyodide": {"learner"},
    "kernel": set(),
    "learner": set(),
}
#: Rooms by the first part of a module's path inside the package; anything else is learner API.
ROOMS = {
    "cli": "cli",
    "cli_options": "cli",
    "__main__": "cli",
    "web": "web",
    "checking": "checking",
    "course": "course",
    "pyodide": "pyodide",
    "kernel": "kernel",
    "kernel_warm_up": "kernel",
    # The controls of a cell (promptdojo.ui) are the kernel's other half: the kernel hands each
    # run its ControlRun. Standard library only, like the kernel.
    "ui": "kernel",
}


def room_of(module: str) -> str:
    """The room of ``promptdojo.<module>`` (``""`` is the package itself: the learner API)."""
    first = module.split(".")[0]
    return ROOMS.get(first, "learner")


def _module_name(path: Path, package: Path) -> str:
    parts = path.relative_to(package).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def _imports(path: Path, package: Path) -> list[tuple[int, str]]:
    """``(line, module inside promptdojo)`` for each import of our own code in ``path``."""
    here = _module_name(path, package).split(".") if path.name != "__init__.py" else None
    if here is None:
        here = [*_module_name(path, package).split("."), "__init__"]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = here[: len(here) - node.level]
            names = [".".join(["promptdojo", *base, *(node.module or "").split(".")]).rstrip(".")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if name == "promptdojo" or name.startswith("promptdojo."):
                found.append((node.lineno, name.removeprefix("promptdojo").lstrip(".")))
    return found


def back_imports(package: Path) -> list[str]:
    """Every import in ``package`` that runs against :data:`ALLOWED`, as ``FILE:LINE: a -> b``."""
    problems = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        room = room_of(_module_name(path, package))
        for line, target in _imports(path, package):
            other = room_of(target)
            if other != room and other not in ALLOWED[room] and target:
                where = path.relative_to(package).as_posix()
                problems.append(f"{where}:{line}: {room} imports {other} (promptdojo.{target})")
    return problems


def test_every_import_runs_the_allowed_way() -> None:
    assert back_imports(PACKAGE) == []


def _package_copy(tmp_path: Path) -> Path:
    """A copy of the package's Python, to plant a wrong import in."""
    copy = tmp_path / "promptdojo"
    skipped = shutil.ignore_patterns("*.safetensors", "*.json", "*.txt")
    shutil.copytree(PACKAGE, copy, ignore=skipped)
    return copy


def test_a_back_import_is_caught(tmp_path: Path) -> None:
    copy = _package_copy(tmp_path)
    model = copy / "course" / "model.py"
    model.write_text(model.read_text() + "\nfrom promptdojo.web.app import create_app\n")
    lock = copy / "pyodide" / "lock.py"
    lock.write_text(lock.read_text() + "\nfrom ..checking import judge\n")
    found = back_imports(copy)
    assert len(found) == 2, found
    assert found[0].startswith("course/model.py:")
    assert "course imports web (promptdojo.web.app)" in found[0]
    assert found[1].startswith("pyodide/lock.py:")
    assert "pyodide imports checking (promptdojo.checking)" in found[1]


def _loaded_at_import(path: Path, package: Path) -> set[str]:
    """The modules of ours that importing ``path`` imports: its module-level imports (those under
    ``if TYPE_CHECKING:`` and inside functions run later, or never), a ``from a import b`` as
    ``a.b`` when ``b`` is a module."""
    modules = {_module_name(p, package) for p in package.rglob("*.py")}
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [
                f"{node.module}.{a.name}"
                if f"{node.module}.{a.name}".removeprefix("promptdojo.") in modules
                else node.module
                for a in node.names
            ]
        else:
            continue
        found |= {
            n.removeprefix("promptdojo.") for n in names if n.startswith("promptdojo.")
        } & modules
    return found


def import_loops(package: Path) -> list[list[str]]:
    """Each loop of module-level imports between our modules, as the modules on it."""
    graph = {
        _module_name(path, package): _loaded_at_import(path, package)
        for path in package.rglob("*.py")
        if "__pycache__" not in path.parts
    }
    loops, state = [], {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = "open"
        for other in sorted(graph.get(module, ())):
            if state.get(other) == "open":
                loops.append([*trail[trail.index(other) :], other])
            elif other not in state:
                visit(other, [*trail, other])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return loops


def test_no_module_imports_itself_back() -> None:
    assert import_loops(PACKAGE) == []


def test_an_import_loop_is_caught(tmp_path: Path) -> None:
    copy = _package_copy(tmp_path)
    outline = copy / "course" / "outline.py"
    outline.write_text(outline.read_text() + "\nfrom promptdojo.course import validate\n")
    loops = import_loops(copy)
    assert any({"course.outline", "course.validate"} <= set(loop) for loop in loops), loops


def test_only_the_command_line_imports_the_web_room() -> None:
    importers = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if room_of(_module_name(path, PACKAGE)) != "web"
        and any(room_of(t) == "web" for _, t in _imports(path, PACKAGE))
    }
    assert importers == {"cli.py"}


def test_every_room_is_in_the_table() -> None:
    assert set(ROOMS.values()) | {"learner"} == set(ALLOWED)
    for row in ALLOWED.values():
        assert row <= set(ALLOWED)


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


def test_import_promptdojo_loads_neither_fastapi_nor_numpy() -> None:
    code = (
        "import sys, promptdojo; print(sorted(m for m in ('fastapi', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_authoring_room_does_not_import_the_web_server() -> None:
    code = (
        "import sys, promptdojo.course.parse, promptdojo.course.validate, "
        "promptdojo.checking.console, promptdojo.pyodide.cache; print('fastapi' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
