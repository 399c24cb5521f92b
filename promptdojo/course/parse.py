"""Read a lesson folder into the typed model, reporting every mistake with its file and line.

The format is documented in ``docs/authoring.md``. In short: ``lesson.yaml`` holds the metadata,
each ``NN-slug.md`` file is a step with YAML front matter, fenced ``python`` blocks are cells whose
attributes (``{#id .exercise time_limit=5}``) say what they are, and fenced ``markdown {.hint}``
blocks are hints. All mistakes are collected, so one run reports them all.
"""

from __future__ import annotations

import ast
import difflib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.attrs.parse import ParseError, parse
from mdit_py_plugins.front_matter import front_matter_plugin

from promptdojo.course.model import (
    Cell,
    CellKind,
    Diagnostic,
    Exercise,
    Hint,
    Lesson,
    LessonError,
    Location,
    Prose,
    Step,
)

LESSON_FILE = "lesson.yaml"
STEP_FILE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>[a-z0-9][a-z0-9-]*)\.md$")
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
CELL_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")

#: lesson.yaml keys and the type each must have.
LESSON_KEYS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "title": str,
    "chapter": str,
    "version": int,
    "packages": list,
    "time_limit": (int, float),
    "seed": int,
}
REQUIRED_LESSON_KEYS = ("id", "title", "chapter")
_TYPE_NAMES = {
    "id": "text",
    "title": "text",
    "chapter": "text",
    "version": "a whole number",
    "packages": "a list",
    "time_limit": "a number of seconds",
    "seed": "a whole number",
}
_EXAMPLES = {
    "id": "my-lesson",
    "title": "My lesson",
    "chapter": "ch 1 · Basics",
    "version": "1",
    "packages": "[numpy]",
    "time_limit": "30",
    "seed": "0",
}
STEP_KEYS = ("title", "summary")
CELL_KEYS = ("id", "class", "for", "raises", "time_limit", "no-ci")
CELL_CLASSES = tuple(k.value for k in CellKind if k is not CellKind.CODE)
HINT_LANGUAGES = ("markdown", "md")


def markdown() -> MarkdownIt:
    """The one markdown dialect of lessons: CommonMark, tables, front matter, no raw HTML."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").use(front_matter_plugin)


@dataclass
class Report:
    """Diagnostics collected while parsing."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, path: Path, line: int | None, message: str, hint: str = "") -> None:
        self.items.append(Diagnostic(Location(path, line), message, hint))


def _did_you_mean(word: object, choices: tuple[str, ...] | list[str]) -> str:
    # YAML keys need not be strings (``1:``, ``null:``), so compare their text.
    close = difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"use one of: {', '.join(choices)}"


def _read_text(path: Path, report: Report) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        report.add(path, line, "file is not valid UTF-8", "save it as UTF-8")
    except OSError as exc:
        report.add(path, None, f"cannot read file ({exc.strerror})")
    return None


def _load_mapping(
    text: str, path: Path, first_line: int, report: Report, what: str
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """Parse YAML that must be a mapping; also return the line of each key."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        last = first_line + max(text.count("\n") - 1, 0)
        line = min(first_line + (mark.line if mark is not None else 0), last)
        reason = getattr(exc, "problem", None) or str(exc)
        report.add(path, line, f"invalid YAML in {what}: {reason}", "check indentation and quotes")
        return None
    if data is None:
        return {}, {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        report.add(path, first_line, f"{what} must be a mapping of keys to values")
        return None
    # Keyed by the text of each key as parsed (``null:`` is None, ``1:`` is 1), as ``data`` is.
    lines: dict[str, int] = {}
    for key, _ in node.value:
        if isinstance(key, yaml.ScalarNode):
            plain = key.value and not key.style  # a quoted key is text as written
            parsed = yaml.SafeLoader(key.value).get_single_data() if plain else key.value
            lines[str(parsed)] = first_line + key.start_mark.line
    return data, lines


def _parse_metadata(folder: Path, report: Report, known: set[str] | None) -> dict[str, Any]:
    path = folder / LESSON_FILE
    if not path.is_file():
        report.add(
            path, None, "lesson metadata is missing", "create lesson.yaml with id, title, chapter"
        )
        return {}
    text = _read_text(path, report)
    loaded = _load_mapping(text, path, 1, report, "lesson.yaml") if text is not None else None
    if loaded is None:
        return {}
    data, lines = loaded
    for key in data:
        if key not in LESSON_KEYS:
            report.add(
                path,
                lines.get(str(key)),
                f"unknown key {key!r}",
                _did_you_mean(key, list(LESSON_KEYS)),
            )
    for key in REQUIRED_LESSON_KEYS:
        if not data.get(key):
            report.add(path, 1, f"lesson.yaml has no {key!r}", f"add `{key}: ...`")
    for key, expected in LESSON_KEYS.items():
        value = data.get(key)
        if value is not None and (not isinstance(value, expected) or isinstance(value, bool)):
            report.add(
                path,
                lines.get(str(key)),
                f"{key!r} must be {_TYPE_NAMES[key]}, not {type(value).__name__}",
                f"e.g. {key}: {_EXAMPLES[key]}",
            )
    lesson_id = data.get("id")
    if isinstance(lesson_id, str) and not SLUG.match(lesson_id):
        report.add(
            path,
            lines.get("id"),
            f"lesson id {lesson_id!r} is not a slug",
            "use lowercase letters, digits and dashes",
        )
    packages = data.get("packages")
    if isinstance(packages, list) and known is not None:
        for name in packages:
            if str(name).lower() not in known:
                report.add(
                    path,
                    lines.get("packages"),
                    f"package {name!r} is not in the pinned Pyodide's pyodide-lock.json",
                    _did_you_mean(str(name).lower(), sorted(known)),
                )
    time_limit = data.get("time_limit")
    if isinstance(time_limit, int | float) and not isinstance(time_limit, bool) and time_limit <= 0:
        report.add(path, lines.get("time_limit"), "time_limit must be a positive number of seconds")
    return data


@dataclass
class _Fence:
    language: str
    attrs: dict[str, str]
    token: Token
    line: int  # 1-based line of the opening fence


def _fence_attrs(token: Token, path: Path, report: Report) -> _Fence:
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
                end, attrs = parse(rest)
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
    return _Fence(language.lower(), attrs, token, line)


def _unclosed(token: Token, lines: list[str]) -> bool:
    """markdown-it runs an unclosed fence to the end of the file; spot that."""
    if token.map is None:
        return False
    last = lines[token.map[1] - 1].strip() if token.map[1] - 1 < len(lines) else ""
    marker = token.markup
    return token.map[1] - token.map[0] < 2 or not (
        last.startswith(marker[0] * len(marker)) and set(last) <= {marker[0]}
    )


def _module_roots(code: str) -> list[tuple[str, int]]:
    roots = []
    for node in ast.walk(ast.parse(code)):
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


def _python_cell(
    fence: _Fence, path: Path, report: Report, index: int, rules: ImportRules
) -> Cell | None:
    attrs, line = fence.attrs, fence.line
    for key in attrs:
        if key not in CELL_KEYS:
            report.add(path, line, f"unknown cell attribute {key!r}", _did_you_mean(key, CELL_KEYS))
    classes = attrs.get("class", "").split()
    kinds = []
    for name in classes:
        if name in CELL_CLASSES:
            kinds.append(CellKind(name))
        elif name == "hint":
            report.add(
                path, line, "a hint is prose, not python", "write it as ```markdown {.hint for=ID}"
            )
        else:
            report.add(
                path, line, f"unknown cell class {name!r}", _did_you_mean(name, CELL_CLASSES)
            )
    if len(kinds) > 1:
        report.add(
            path,
            line,
            f"a cell has one kind, got {', '.join(k.value for k in kinds)}",
            "keep one class",
        )
    kind = kinds[0] if kinds else CellKind.CODE
    cell_id = attrs.get("id") or f"cell-{index}"
    if not CELL_ID.match(cell_id):
        report.add(
            path,
            line,
            f"cell id {cell_id!r} is not valid",
            "start with a letter; use letters, digits, - and _",
        )
    exercise = attrs.get("for")
    if kind in (CellKind.CHECK, CellKind.SOLUTION) and not exercise:
        report.add(
            path,
            line,
            f"a {kind.value} cell needs for=EXERCISE_ID",
            "name the exercise it belongs to",
        )
    if exercise and kind not in (CellKind.CHECK, CellKind.SOLUTION) and "hint" not in classes:
        report.add(
            path,
            line,
            "for= only goes on check and solution cells",
            "remove it, or add .check or .solution",
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
    code = fence.token.content.rstrip("\n")
    first_line = line + 1
    try:
        ast.parse(code)
    except SyntaxError as exc:
        if raises != "SyntaxError":
            report.add(
                path,
                first_line + (exc.lineno or 1) - 1,
                f"Python syntax error in cell {cell_id!r}: {exc.msg}",
                "fix the code, or mark the cell raises=SyntaxError",
            )
    else:
        for module, lineno in _module_roots(code):
            problem = rules.problem(module)
            if problem is not None:
                report.add(path, first_line + lineno - 1, *problem)
    return Cell(
        id=cell_id,
        code=code,
        location=Location(path, first_line),
        kind=kind,
        exercise=exercise,
        raises=raises,
        time_limit=time_limit,
        no_ci=no_ci,
    )


def _parse_step(
    md: MarkdownIt, path: Path, number: int, slug: str, report: Report, rules: ImportRules
) -> Step | None:
    text = _read_text(path, report)
    if text is None:
        return None
    lines = text.splitlines()
    tokens = md.parse(text)
    meta: dict[str, Any] = {}
    front_matter_failed = False
    if tokens and tokens[0].type == "front_matter":
        loaded = _load_mapping(tokens[0].content, path, 2, report, "front matter")
        front_matter_failed = loaded is None
        if loaded is not None:
            meta, key_lines = loaded
            for key in meta:
                if key not in STEP_KEYS:
                    report.add(
                        path,
                        key_lines.get(str(key)),  # keys may be None or numbers
                        f"unknown front matter key {key!r}",
                        _did_you_mean(key, STEP_KEYS),
                    )
        tokens = tokens[1:]
    title = meta.get("title")
    if not title and not front_matter_failed:
        report.add(
            path, 1, "step has no title", "start the file with front matter: ---, title: ..., ---"
        )
        title = slug.replace("-", " ").capitalize()

    parts: list[Prose | Cell] = []
    setup: list[Cell] = []
    attached: list[Cell] = []
    hints: list[tuple[str | None, Hint, int]] = []
    prose: list[Token] = []
    seen_ids: dict[str, int] = {}

    def flush() -> None:
        if prose:
            parts.append(Prose(md.renderer.render(prose, md.options, {})))
            prose.clear()

    index = 0
    for token in tokens:
        if token.type != "fence":
            prose.append(token)
            continue
        fence = _fence_attrs(token, path, report)
        if _unclosed(token, lines):
            report.add(
                path,
                fence.line,
                "code fence is never closed",
                f"add a line with {token.markup} after the code",
            )
        is_hint = "hint" in fence.attrs.get("class", "").split()
        if fence.language == "python":
            index += 1
            cell = _python_cell(fence, path, report, index, rules)
            if cell is None:
                continue
            if cell.id in seen_ids:
                report.add(
                    path,
                    fence.line,
                    f"duplicate cell id {cell.id!r} (first used on line {seen_ids[cell.id]})",
                    "give each cell its own #id",
                )
            seen_ids.setdefault(cell.id, fence.line)
            if cell.kind is CellKind.SETUP:
                setup.append(cell)
            elif cell.visible:
                flush()
                parts.append(cell)
            else:
                attached.append(cell)
        elif is_hint and fence.language in HINT_LANGUAGES:
            hint = Hint(md.render(token.content), Location(path, fence.line))
            hints.append((fence.attrs.get("for"), hint, fence.line))
        elif is_hint:
            report.add(
                path,
                fence.line,
                f"a hint must be a markdown fence, not {fence.language or 'plain'}",
                "write ```markdown {.hint for=ID}",
            )
        else:
            prose.append(token)
    flush()

    exercises: dict[str, Exercise] = {}
    starters = {c.id: c for c in parts if isinstance(c, Cell) and c.kind is CellKind.EXERCISE}
    checks: dict[str, Cell] = {}
    solutions: dict[str, Cell] = {}
    for cell in attached:
        target = cell.exercise or ""
        line = cell.first_line - 1
        if cell.exercise and target not in starters:
            report.add(
                path,
                line,
                f"{cell.kind.value} for unknown exercise {target!r}",
                _did_you_mean(target, list(starters))
                if starters
                else "add an exercise cell {#" + target + " .exercise} before it",
            )
            continue
        bucket = checks if cell.kind is CellKind.CHECK else solutions
        if target in bucket:
            report.add(
                path,
                line,
                f"exercise {target!r} already has a {cell.kind.value} "
                f"(line {bucket[target].first_line - 1})",
                "keep one",
            )
            continue
        bucket[target] = cell
    exercise_hints: dict[str, list[Hint]] = {}
    for target, hint, line in hints:
        if not target:
            report.add(
                path, line, "hint without for=EXERCISE_ID", "name the exercise it helps with"
            )
        elif target not in starters:
            report.add(
                path,
                line,
                f"hint for unknown exercise {target!r}",
                _did_you_mean(target, list(starters)) if starters else "add the exercise first",
            )
        else:
            exercise_hints.setdefault(target, []).append(hint)
    for cell_id, starter in starters.items():
        if cell_id not in checks:
            report.add(
                path,
                starter.first_line - 1,
                f"exercise {cell_id!r} has no check",
                "add ```python {.check for=" + cell_id + "} with asserts",
            )
            continue
        exercises[cell_id] = Exercise(
            id=cell_id,
            starter=starter,
            check=checks[cell_id],
            hints=tuple(exercise_hints.get(cell_id, ())),
            solution=solutions.get(cell_id),
        )
    return Step(
        number=number,
        slug=slug,
        title=str(title),
        path=path,
        parts=tuple(parts),
        setup=tuple(setup),
        exercises=tuple(exercises.values()),
    )


def _default_lock() -> Any:
    from promptdojo.web.package_cache import Lock
    from promptdojo.web.resources import pyodide_core_dir

    core = pyodide_core_dir()
    return Lock.read(core) if core is not None else None


def load_lesson(folder: Path, lock: Any = "default") -> Lesson:
    """Parse the lesson in ``folder``; raise :class:`LessonError` listing every mistake.

    ``lock`` is the pinned Pyodide's lock (:class:`promptdojo.web.package_cache.Lock`) used to
    check imports; by default the built one, and ``None`` skips the import check.
    """
    folder = Path(folder)
    if lock == "default":
        lock = _default_lock()
    report = Report()
    known = set(lock.packages) if lock is not None else None
    meta = _parse_metadata(folder, report, known)
    declared: set[str] = set()
    if lock is not None:
        try:
            declared = set(
                lock.with_dependencies(
                    [str(p) for p in meta.get("packages") or [] if str(p).lower() in lock.packages]
                )
            )
        except Exception:  # an unknown package was already reported
            declared = set()
    rules = ImportRules(
        declared=declared,
        package_for_import=lock.package_for_import if lock is not None else None,
        version=f"Pyodide {lock.version}" if lock is not None else "the pinned Pyodide",
    )
    md = markdown()
    steps: list[Step] = []
    seen: dict[int, Path] = {}
    for path in sorted(folder.glob("*.md")):
        match = STEP_FILE.match(path.name)
        if match is None:
            report.add(
                path,
                None,
                "step file name does not start with a step number",
                "name it like 01-overview.md",
            )
            continue
        number = int(match["number"])
        if number in seen:
            report.add(
                path,
                None,
                f"duplicate step number {number} (also {seen[number].name})",
                "renumber one of them",
            )
            continue
        seen[number] = path
        step = _parse_step(md, path, number, match["slug"], report, rules)
        if step is not None:
            steps.append(step)
    if not seen:
        report.add(folder, None, "lesson has no steps", "add a step file like 01-intro.md")
    expected = 1
    for number in sorted(seen):
        if number != expected:
            report.add(
                seen[number],
                None,
                f"step number {number} should be {expected}",
                "number steps 01, 02, 03, … without gaps",
            )
            break
        expected += 1
    if report.items:
        raise LessonError(report.items)
    return Lesson(
        id=str(meta["id"]),
        title=str(meta["title"]),
        chapter=str(meta["chapter"]),
        version=int(meta.get("version", 1)),
        path=folder,
        packages=tuple(str(p) for p in meta.get("packages") or ()),
        time_limit=float(meta.get("time_limit", 30)),
        seed=int(meta.get("seed", 0)),
        steps=tuple(sorted(steps, key=lambda s: s.number)),
    )


def discover(lessons_dir: Path) -> list[Path]:
    """Every lesson folder directly under ``lessons_dir`` (those holding a lesson.yaml)."""
    return sorted(p.parent for p in Path(lessons_dir).glob(f"*/{LESSON_FILE}"))
