"""Fenced ``python`` blocks: their attributes, what they may import, and the cell each becomes."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markdown_it.token import Token
from mdit_py_plugins.attrs.parse import ParseError, parse

from promptdojo.course.controls import declared_controls
from promptdojo.course.model import Cell, CellKind, Location
from promptdojo.course.problems import Report, did_you_mean
from promptdojo.course.source import check_syntax, parse_python, statements

CELL_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
#: Fence languages read as ``python``: the short name, Python 3's, and Quarto's ``{python}``.
PYTHON_ALIASES = ("py", "python3", "{python}")
CELL_KEYS = ("id", "class", "for", "raises", "time_limit", "no-ci", "expect")
#: Kinds that belong to an exercise, named with ``for=ID``.
ATTACHED = (CellKind.CHECK, CellKind.SOLUTION, CellKind.WRONG)
CELL_CLASSES = tuple(k.value for k in CellKind if k is not CellKind.CODE)


#: Cell attributes in their everyday form, ``{#id .class key=value key="a value"}``, single
#: spaces apart: read with one regular expression instead of mdit-py-plugins' parser, which reads
#: one character at a time. Anything else (comments, escapes, tabs, a mistake) goes to that
#: parser, which also says what is wrong; the two agree on every string the pattern accepts.
_NAME = r"[\w:-]+"
_KEY = r"[A-Za-z0-9_:-]+"
_QUOTED = r'"[^"\\{}\n]*"'
_ITEM = rf"(?:[#.]{_NAME}|{_KEY}=(?:{_KEY}|{_QUOTED}))"
_EVERYDAY = re.compile(rf"\{{ *{_ITEM}(?: +{_ITEM})* *\}}")
_PARTS = re.compile(rf'([#.])({_NAME})|({_KEY})=(?:({_KEY})|"([^"\\{{}}\n]*)")')


def read_attributes(text: str) -> tuple[int, dict[str, str]]:
    """``mdit_py_plugins.attrs.parse.parse(text)``: the index of the closing brace and the
    attributes (``id``, ``class`` with the classes joined by spaces, and the other keys, in the
    order the parser gives them); :class:`ParseError` for a mistake."""
    everyday = _EVERYDAY.match(text)
    if everyday is None:
        return parse(text)
    attrs: dict[str, str] = {}
    classes: list[str] = []
    for mark, name, key, bare, quoted in _PARTS.findall(everyday.group()):
        if mark == "#":
            attrs["id"] = name
        elif mark == ".":
            classes.append(name)
        elif key == "class":
            classes.append(bare or quoted)
        else:
            attrs[key] = bare or quoted
    if classes:
        attrs["class"] = " ".join(classes)
    return everyday.end() - 1, attrs


@dataclass
class Fence:
    language: str
    attrs: dict[str, str]
    token: Token
    line: int  # 1-based line of the opening fence


def fence_attrs(token: Token, path: Path, report: Report) -> Fence:
    line = (token.map[0] + 1) if token.map else 1
    info = token.info.strip()
    language, _, rest = info.partition(" ")
    rest = rest.strip()
    attrs: dict[str, str] = {}
    if rest:
        if not rest.startswith("{"):
            report.add(
                path,
                line,
                f"cannot read {rest!r} after the language",
                "write cell attributes in braces: {#id .exercise}",
            )
        else:
            try:
                end, attrs = read_attributes(rest)
            except ParseError as exc:
                report.add(
                    path,
                    line,
                    f"cannot parse cell attributes {rest!r} ({exc})",
                    "write them like {#id .exercise time_limit=5}",
                )
            else:
                if rest[end + 1 :].strip():
                    report.add(
                        path,
                        line,
                        f"unexpected text after the attributes: {rest[end + 1 :].strip()!r}",
                    )
    language = language.lower()
    if language in PYTHON_ALIASES:
        language = "python"
    return Fence(language, attrs, token, line)


def unclosed(token: Token, lines: list[str]) -> bool:
    """markdown-it runs an unclosed fence to the end of the file; spot that."""
    if token.map is None:
        return False
    last = lines[token.map[1] - 1].strip() if token.map[1] - 1 < len(lines) else ""
    marker = token.markup
    return token.map[1] - token.map[0] < 2 or not (
        last.startswith(marker[0] * len(marker)) and set(last) <= {marker[0]}
    )


def _module_roots(tree: ast.Module) -> list[tuple[str, int]]:
    roots = []
    for node in statements(tree):
        if isinstance(node, ast.Import):
            roots += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.append((node.module.split(".")[0], node.lineno))
    return roots


@dataclass
class ImportRules:
    """What cells may import: the stdlib, promptdojo, and the lesson's declared packages."""

    declared: set[str]
    package_for_import: Callable[[str], str | None] | None
    version: str = "the pinned Pyodide"

    def problem(self, module: str) -> tuple[str, str] | None:
        if module in sys.stdlib_module_names or module == "promptdojo" or module == "__future__":
            return None
        if self.package_for_import is None:
            return None
        package = self.package_for_import(module)
        if package is None:
            return (
                f"imports {module}, which {self.version} cannot provide",
                "use the standard library, promptdojo, or a package listed in pyodide-lock.json",
            )
        if package not in self.declared:
            return (
                f"imports {module}, but lesson.yaml does not declare the package {package!r}",
                f"add {package} to packages in lesson.yaml",
            )
        return None


def defined_names(tree: ast.Module) -> set[str]:
    """Classes a cell defines and names it imports: exceptions ``raises=`` may name."""
    names = set()
    for node in statements(tree):
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _kind(fence: Fence, path: Path, report: Report) -> CellKind | None:
    """The cell's kind, from its classes; None for a fence marked as a hint (prose, reported)."""
    kinds = []
    for name in fence.attrs.get("class", "").split():
        if name in CELL_CLASSES:
            kinds.append(CellKind(name))
        elif name == "hint":
            report.add(
                path,
                fence.line,
                "a hint is prose, not python",
                "write it as ```markdown {.hint for=ID}",
            )
            return None  # one problem: its prose is not also a Python syntax error
        else:
            report.add(
                path, fence.line, f"unknown cell class {name!r}", did_you_mean(name, CELL_CLASSES)
            )
    if len(kinds) > 1:
        report.add(
            path,
            fence.line,
            f"a cell has one kind, got {', '.join(k.value for k in kinds)}",
            "keep one class",
        )
    return kinds[0] if kinds else CellKind.CODE


def _check_links(fence: Fence, kind: CellKind, cell_id: str, path: Path, report: Report) -> None:
    """The attributes that tie a cell to others: a valid id, and ``for=`` where it belongs."""
    attrs, line = fence.attrs, fence.line
    if not CELL_ID.match(cell_id):
        report.add(
            path,
            line,
            f"cell id {cell_id!r} is not valid",
            "start with a letter; use letters, digits, - and _",
        )
    exercise = attrs.get("for")
    if kind in ATTACHED and not exercise:
        report.add(
            path,
            line,
            f"a {kind.value} cell needs for=EXERCISE_ID",
            "name the exercise it belongs to",
        )
    if exercise and kind not in ATTACHED and "hint" not in attrs.get("class", "").split():
        report.add(
            path,
            line,
            "for= only goes on check, solution and wrong-answer cells",
            "remove it, or add .check, .solution or .wrong",
        )


def _check_values(fence: Fence, kind: CellKind, path: Path, report: Report) -> float | None:
    """The attributes with a value to check (``expect=``, ``time_limit=``, ``no-ci=``,
    ``raises=``), each reported where it is wrong; returns the time limit, when it is valid."""
    attrs, line = fence.attrs, fence.line
    expect = attrs.get("expect")
    if expect is not None and kind is not CellKind.WRONG:
        report.add(
            path, line, "expect= only goes on wrong-answer cells", "remove it, or add .wrong"
        )
    elif expect is not None and not expect.strip():
        report.add(
            path,
            line,
            "expect= is empty",
            'write the words the check\'s message must hold: expect="too high", or remove it',
        )
    time_limit = None
    if "time_limit" in attrs:
        try:
            time_limit = float(attrs["time_limit"])
            if time_limit <= 0:
                raise ValueError
        except ValueError:
            report.add(
                path,
                line,
                f"time_limit={attrs['time_limit']!r} is not a positive number of seconds",
            )
            time_limit = None
    no_ci = attrs.get("no-ci")
    if no_ci is not None and not no_ci.strip():
        report.add(
            path, line, "no-ci needs a reason", 'write no-ci="why this cell cannot run in CI"'
        )
    raises = attrs.get("raises")
    if raises is not None and not raises.isidentifier():
        report.add(
            path,
            line,
            f"raises={raises!r} is not an exception name",
            "e.g. raises=ZeroDivisionError",
        )
    return time_limit


def _check_code(
    code: str,
    kind: CellKind,
    where: tuple[Path, int, str],
    raises: str | None,
    report: Report,
    rules: ImportRules,
    trees: dict[str, ast.Module] | None,
) -> tuple[dict[str, Any], ...]:
    """The cell's code, parsed once (``where``: its file, first line and id): its syntax, its
    imports and its literal controls reported; its syntax tree kept in ``trees`` when read.
    Returns the controls it declares with literal arguments."""
    path, first_line, cell_id = where
    # The tree only when something is read from it: imports, the classes ``raises=`` may name, a
    # check's messages and a solution's answers (giveaways); else a syntax check suffices.
    wanted = kind in (CellKind.CHECK, CellKind.SOLUTION) or "import" in code or "class" in code
    try:
        tree = parse_python(code) if wanted else check_syntax(code)
    except SyntaxError as exc:
        if raises != "SyntaxError":
            report.add(
                path,
                first_line + (exc.lineno or 1) - 1,
                f"Python syntax error in cell {cell_id!r}: {exc.msg}",
                "fix the code, or mark the cell raises=SyntaxError",
            )
        return ()
    for module, lineno in _module_roots(tree) if tree is not None else ():
        problem = rules.problem(module)
        if problem is not None:
            report.add(path, first_line + lineno - 1, *problem)
    if trees is not None and tree is not None:
        trees[code] = tree
    controls, problems = declared_controls(code, tree)
    for lineno, problem in problems:
        report.add(path, first_line + lineno - 1, f"cell {cell_id!r}: {problem}")
    return tuple(controls)


def python_cell(
    fence: Fence,
    path: Path,
    report: Report,
    index: int,
    rules: ImportRules,
    trees: dict[str, ast.Module] | None = None,
) -> Cell | None:
    """The cell ``fence`` holds, its mistakes reported. Its code is parsed once: the syntax tree
    is kept in ``trees`` by code, for the step's other checks to read."""
    attrs, line = fence.attrs, fence.line
    for key in attrs:
        if key not in CELL_KEYS:
            report.add(path, line, f"unknown cell attribute {key!r}", did_you_mean(key, CELL_KEYS))
    kind = _kind(fence, path, report)
    if kind is None:
        return None
    cell_id = attrs.get("id") or f"cell-{index}"
    _check_links(fence, kind, cell_id, path, report)
    time_limit = _check_values(fence, kind, path, report)
    code = fence.token.content.rstrip("\n")
    raises = attrs.get("raises")
    controls = _check_code(code, kind, (path, line + 1, cell_id), raises, report, rules, trees)
    return Cell(
        id=cell_id,
        code=code,
        location=Location(path, line + 1),
        kind=kind,
        exercise=attrs.get("for"),
        raises=raises,
        time_limit=time_limit,
        no_ci=attrs.get("no-ci"),
        expect=attrs.get("expect") if kind is CellKind.WRONG else None,
        controls=controls,
    )
