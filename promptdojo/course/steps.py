"""One step file: front matter, prose, cells, and the exercises their checks and hints belong to."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from promptdojo.course.cells import ImportRules, fence_attrs, python_cell, unclosed
from promptdojo.course.metadata import load_mapping
from promptdojo.course.model import Cell, CellKind, Exercise, Hint, Location, Prose, Step
from promptdojo.course.problems import Report, did_you_mean, read_text

STEP_FILE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>[a-z0-9][a-z0-9-]*)\.md$")
STEP_KEYS = ("title", "summary")
HINT_LANGUAGES = ("markdown", "md")


def parse_step(
    md: MarkdownIt, path: Path, number: int, slug: str, report: Report, rules: ImportRules
) -> Step | None:
    text = read_text(path, report)
    if text is None:
        return None
    lines = text.splitlines()
    tokens = md.parse(text)
    meta: dict[str, Any] = {}
    front_matter_failed = False
    if tokens and tokens[0].type == "front_matter":
        loaded = load_mapping(tokens[0].content, path, 2, report, "front matter")
        front_matter_failed = loaded is None
        if loaded is not None:
            meta, key_lines = loaded
            for key in meta:
                if key not in STEP_KEYS:
                    report.add(
                        path,
                        key_lines.get(str(key)),  # keys may be None or numbers
                        f"unknown front matter key {key!r}",
                        did_you_mean(key, STEP_KEYS),
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
        fence = fence_attrs(token, path, report)
        if unclosed(token, lines):
            report.add(
                path,
                fence.line,
                "code fence is never closed",
                f"add a line with {token.markup} after the code",
            )
        is_hint = "hint" in fence.attrs.get("class", "").split()
        if fence.language == "python":
            index += 1
            cell = python_cell(fence, path, report, index, rules)
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
                did_you_mean(target, list(starters))
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
                did_you_mean(target, list(starters)) if starters else "add the exercise first",
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
