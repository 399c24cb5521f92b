"""``lesson.yaml`` and YAML front matter: mappings read with the line of every key, then checked."""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from keyword import iskeyword
from pathlib import Path
from typing import Any

import yaml

from promptdojo.course.model import DEFAULT_TIME_LIMIT
from promptdojo.course.problems import Report, did_you_mean, read_text
from promptdojo.course.yamlread import load as _load

LESSON_FILE = "lesson.yaml"
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")

#: lesson.yaml keys and the type each must have.
LESSON_KEYS: dict[str, type | tuple[type, ...]] = {
    "id": str,
    "title": str,
    "chapter": str,
    "packages": list,
    "time_limit": (int, float),
    "seed": int,
    # Limits on each cell's process under `promptdojo check` (CPython; docs/authoring.md).
    "memory_limit_mb": int,
    "cpu_limit": (int, float),
    "file_size_limit_mb": int,
    # Running a cell first runs the step's earlier cells not yet run (static/js/page/order.js).
    "run_earlier_cells": bool,
    # Names whose objects no call changes, for which cells a run needs (course/needs.py).
    "unchanged_by_calls": list,
}
#: ``chapter`` may be left out: course.yaml names each lesson's chapter.
REQUIRED_LESSON_KEYS = ("id", "title")
#: Keys that once meant something, and what to do now.
RETIRED_KEYS = {
    "version": "remove it: when you change a cell's starter code, learners who edited that cell "
    "are asked whether to keep theirs, without a version to bump"
}
_TYPE_NAMES = {
    "id": "text",
    "title": "text",
    "chapter": "text",
    "packages": "a list",
    "time_limit": "a number of seconds",
    "seed": "a whole number",
    "memory_limit_mb": "a whole number of megabytes",
    "cpu_limit": "a number of seconds",
    "file_size_limit_mb": "a whole number of megabytes",
    "run_earlier_cells": "true or false",
    "unchanged_by_calls": "a list of Python names",
}
_EXAMPLES = {
    "id": "my-lesson",
    "title": "My lesson",
    "chapter": "ch 1 · Basics",
    "packages": "[numpy]",
    "time_limit": "30",
    "seed": "0",
    "memory_limit_mb": "4096",
    "cpu_limit": "60",
    "file_size_limit_mb": "256",
    "run_earlier_cells": "false",
    "unchanged_by_calls": "[model, tok]",
}


def closest_packages(name: str, known: set[str]) -> str:
    """The few Pyodide packages nearest ``name``, never the whole list of hundreds."""
    close = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    if len(close) == 1:
        return f"did you mean {close[0]!r}?"
    if close:
        return f"the closest are: {', '.join(close)}"
    nearest = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.3)
    nearest_text = f" (the nearest names: {', '.join(nearest)})" if nearest else ""
    return (
        f"none of its {len(known)} packages is close{nearest_text}: a lesson can use the "
        "standard library, promptdojo, and packages built for Pyodide"
    )


#: The most text a lesson.yaml or a step's front matter may hold: a few keys, never megabytes.
MAX_YAML_BYTES = 64 * 1024


@functools.lru_cache(maxsize=256)
def _plain_key(text: str) -> Any:
    """What a plain key's text means (``null`` is None, ``1`` is 1): the same few keys come
    again in every step's front matter, so each is read once."""
    return _load(text, fast=True)[1]


def compose(text: str) -> yaml.Node | None:
    """The node tree of ``text`` (each node knows its line), read with the same limits."""
    return _load(text)[0]


_KEY_VALUE = re.compile(r"^\s*(?P<key>[\w-]+):\s+(?P<value>.*?)\s*$")


def likely_fix(text: str, line: int | None) -> str:
    """What most likely fixes a YAML error at ``line`` (0-based) of ``text``: quoting a value
    that holds ": " (``title: Top-p: nucleus sampling``), else a general word."""
    lines = text.splitlines()
    for index in [line] if line is not None and line < len(lines) else range(len(lines)):
        match = _KEY_VALUE.match(lines[index])
        if match and ": " in match["value"] and match["value"][0] not in "\"'[{":
            key, value = match["key"], match["value"].replace('"', '\\"')
            return f'quote the {key}: it contains ": " (write {key}: "{value}")'
    return "check indentation and quotes; quote a value that holds a colon or starts with [ or {"


def load_mapping(
    text: str, path: Path, first_line: int, report: Report, what: str
) -> tuple[dict[str, Any], dict[str, int]] | None:
    """Parse YAML that must be a mapping; also return the line of each key."""
    size = len(text.encode("utf-8"))
    if size > MAX_YAML_BYTES:
        report.add(
            path,
            first_line,
            f"{what} is {size // 1024} KB, more than the {MAX_YAML_BYTES // 1024} KB it may be",
            "keep only the keys it needs; long text belongs in the step's markdown",
        )
        return None
    try:
        node, data = _load(text, fast=True)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        lines = text.count("\n") + (not text.endswith("\n"))  # front matter ends without one
        last = first_line + max(lines - 1, 0)
        line = min(first_line + (mark.line if mark is not None else 0), last)
        reason = getattr(exc, "problem", None) or str(exc)
        ours = isinstance(exc, yaml.composer.ComposerError) and exc.context is None
        column = f" (column {mark.column + 1})" if mark is not None and not ours else ""
        # Our own refusals (aliases, nesting) say their fix already.
        fix = "check indentation and quotes" if ours else likely_fix(text, mark and mark.line)
        report.add(path, line, f"invalid YAML in {what}: {reason}{column}", fix)
        return None
    except (ValueError, OverflowError, RecursionError) as exc:  # a 5,000-digit number, say
        report.add(path, first_line, f"invalid YAML in {what}: {exc}", "write a plainer value")
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
            parsed = _plain_key(key.value) if plain else key.value
            lines[str(parsed)] = first_line + key.start_mark.line
    return data, lines


@dataclass(frozen=True)
class LessonMeta:
    """What lesson.yaml says, with its defaults: a value of the wrong type or out of range was
    reported (:func:`parse_metadata`) and is read as its default, so a lesson with mistakes in
    its metadata still loads. Its fields are :class:`~promptdojo.course.model.Lesson`'s, which
    the parser makes from it whole."""

    id: str
    title: str
    chapter: str = ""
    packages: tuple[str, ...] = ()
    time_limit: float = DEFAULT_TIME_LIMIT
    seed: int | None = None
    memory_limit_mb: int | None = None
    cpu_limit: float | None = None
    file_size_limit_mb: int | None = None
    run_earlier_cells: bool = True
    unchanged_by_calls: tuple[str, ...] = ()

    @classmethod
    def of(cls, data: dict[str, Any], folder: Path) -> LessonMeta:
        """The metadata in ``data`` (lesson.yaml's mapping), defaulted; the id and the title
        default to ``folder``'s name."""
        packages = data.get("packages")
        return cls(
            id=_text(data, "id", folder.name, valid=SLUG.match),
            title=_text(data, "title", folder.name),
            chapter=_text(data, "chapter", ""),
            packages=tuple(p for p in packages if isinstance(p, str))
            if isinstance(packages, list)
            else (),
            time_limit=_number(data, "time_limit", float, DEFAULT_TIME_LIMIT),
            seed=_number(data, "seed", int, None),
            memory_limit_mb=_number(data, "memory_limit_mb", int, None),
            cpu_limit=_number(data, "cpu_limit", float, None),
            file_size_limit_mb=_number(data, "file_size_limit_mb", int, None),
            run_earlier_cells=data.get("run_earlier_cells") is not False,
            unchanged_by_calls=tuple(_python_names(data.get("unchanged_by_calls"))),
        )


def _python_names(value: Any) -> list[str]:
    """The entries of ``value`` (a list) that are Python names; none when it is no list."""
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str) and v.isidentifier() and not iskeyword(v)]


def _text(data: dict[str, Any], key: str, default: str, valid: Any = None) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value or (valid is not None and not valid(value)):
        return default
    return value


def _number(data: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if kind is int and not isinstance(value, int):
        return default
    return kind(value) if value > 0 or key == "seed" else default


def parse_metadata(folder: Path, report: Report, known: set[str] | None) -> LessonMeta:
    """What ``folder``'s lesson.yaml says, every mistake reported (``known``: the package names
    the pinned lock has, or None not to check them)."""
    return LessonMeta.of(_checked_metadata(folder, report, known), folder)


def _checked_metadata(folder: Path, report: Report, known: set[str] | None) -> dict[str, Any]:
    """lesson.yaml's mapping as written (empty when it cannot be read), each mistake reported."""
    path = folder / LESSON_FILE
    if not path.is_file():
        report.add(
            path, None, "lesson metadata is missing", "create lesson.yaml with id, title, chapter"
        )
        return {}
    text = read_text(path, report)
    loaded = load_mapping(text, path, 1, report, "lesson.yaml") if text is not None else None
    if loaded is None:
        return {}
    data, lines = loaded
    for key in data:
        if key in RETIRED_KEYS:
            report.add(path, lines.get(str(key)), f"{key!r} is no longer used", RETIRED_KEYS[key])
        elif key not in LESSON_KEYS:
            report.add(
                path,
                lines.get(str(key)),
                f"unknown key {key!r}",
                did_you_mean(key, list(LESSON_KEYS)),
            )
    for key in REQUIRED_LESSON_KEYS:
        if not data.get(key):
            report.add(path, 1, f"lesson.yaml has no {key!r}", f"add `{key}: ...`")
    for key, expected in LESSON_KEYS.items():
        value = data.get(key)
        # YAML's true is a bool, and Python's bools are ints: only a bool key takes one.
        wrong_bool = isinstance(value, bool) is not (expected is bool)
        if value is not None and (not isinstance(value, expected) or wrong_bool):
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
                    closest_packages(str(name).lower(), known),
                )
    names = data.get("unchanged_by_calls")
    for name in names if isinstance(names, list) else ():
        if name not in _python_names([name]):
            report.add(
                path,
                lines.get("unchanged_by_calls"),
                f"unchanged_by_calls lists {name!r}, which is not a Python name",
                "list the names a step's set-up binds, e.g. unchanged_by_calls: [model, tok]",
            )
    for key in ("time_limit", "memory_limit_mb", "cpu_limit", "file_size_limit_mb"):
        value = data.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value <= 0:
            unit = "megabytes" if key.endswith("_mb") else "seconds"
            report.add(path, lines.get(key), f"{key} must be a positive number of {unit}")
    return data
