"""Read a lesson folder into the typed model, reporting every mistake with its file and line.

A lesson folder holds ``lesson.yaml`` (metadata) and one markdown file per step, named
``NN-slug.md``. Each step starts with YAML front matter holding at least ``title``. Fenced
``python`` blocks are cells; everything else is prose.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from promptdojo.course.model import (
    Cell,
    Diagnostic,
    Lesson,
    LessonError,
    Location,
    Prose,
    Step,
)

LESSON_FILE = "lesson.yaml"
STEP_FILE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>[a-z0-9][a-z0-9-]*)\.md$")
LESSON_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def markdown() -> MarkdownIt:
    """The one markdown dialect of lessons: CommonMark, tables, front matter, no raw HTML."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").use(front_matter_plugin)


def _read_text(path: Path, problems: list[Diagnostic]) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        problems.append(
            Diagnostic(Location(path, line), "file is not valid UTF-8", "save it as UTF-8")
        )
    except OSError as exc:
        problems.append(Diagnostic(Location(path), f"cannot read file ({exc.strerror})"))
    return None


def _load_yaml(text: str, path: Path, first_line: int, problems: list[Diagnostic]) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + (mark.line if mark is not None else 0)
        reason = getattr(exc, "problem", None) or str(exc)
        problems.append(Diagnostic(Location(path, line), f"invalid YAML: {reason}"))
        return None


def _parse_metadata(folder: Path, problems: list[Diagnostic]) -> dict[str, Any]:
    path = folder / LESSON_FILE
    if not path.is_file():
        problems.append(
            Diagnostic(
                Location(path),
                "lesson metadata is missing",
                "create lesson.yaml with at least id, title and chapter",
            )
        )
        return {}
    text = _read_text(path, problems)
    if text is None:
        return {}
    data = _load_yaml(text, path, 1, problems)
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(Diagnostic(Location(path, 1), "lesson.yaml must be a mapping of keys"))
        return {}
    for key in ("id", "title", "chapter"):
        if not data.get(key):
            problems.append(Diagnostic(Location(path, 1), f"lesson.yaml has no {key!r}"))
    lesson_id = data.get("id")
    if lesson_id and not LESSON_ID.match(str(lesson_id)):
        problems.append(
            Diagnostic(
                Location(path, 1),
                f"lesson id {lesson_id!r} is not a slug",
                "use lowercase letters, digits and dashes",
            )
        )
    return data


def _parse_step(
    md: MarkdownIt, path: Path, number: int, slug: str, problems: list[Diagnostic]
) -> Step | None:
    text = _read_text(path, problems)
    if text is None:
        return None
    tokens = md.parse(text)
    meta: dict[str, Any] = {}
    if tokens and tokens[0].type == "front_matter":
        data = _load_yaml(tokens[0].content, path, 2, problems)
        if isinstance(data, dict):
            meta = data
        elif data is not None:
            problems.append(Diagnostic(Location(path, 2), "front matter must be a mapping"))
        tokens = tokens[1:]
    title = meta.get("title")
    if not title:
        problems.append(
            Diagnostic(
                Location(path, 1),
                "step has no title",
                "start the file with front matter: ---, title: ..., ---",
            )
        )
        title = slug.replace("-", " ").capitalize()
    parts: list[Prose | Cell] = []
    prose: list[Token] = []

    def flush() -> None:
        if prose:
            parts.append(Prose(md.renderer.render(prose, md.options, {})))
            prose.clear()

    for token in tokens:
        if token.type == "fence" and token.info.strip().split(" ")[0] == "python":
            flush()
            assert token.map is not None
            index = sum(isinstance(p, Cell) for p in parts) + 1
            parts.append(
                Cell(
                    id=f"cell-{index}",
                    code=token.content.rstrip("\n"),
                    location=Location(path, token.map[0] + 2),
                )
            )
        else:
            prose.append(token)
    flush()
    return Step(number=number, slug=slug, title=str(title), path=path, parts=tuple(parts))


def load_lesson(folder: Path) -> Lesson:
    """Parse the lesson in ``folder``; raise :class:`LessonError` listing every mistake."""
    folder = Path(folder)
    problems: list[Diagnostic] = []
    meta = _parse_metadata(folder, problems)
    md = markdown()
    steps: list[Step] = []
    seen: dict[int, Path] = {}
    for path in sorted(folder.glob("*.md")):
        match = STEP_FILE.match(path.name)
        if match is None:
            problems.append(
                Diagnostic(
                    Location(path),
                    "step file name does not start with a step number",
                    "name it like 01-overview.md",
                )
            )
            continue
        number = int(match["number"])
        if number in seen:
            problems.append(
                Diagnostic(
                    Location(path),
                    f"duplicate step number {number} (also {seen[number].name})",
                    "renumber one of them",
                )
            )
            continue
        seen[number] = path
        step = _parse_step(md, path, number, match["slug"], problems)
        if step is not None:
            steps.append(step)
    if not seen:
        problems.append(
            Diagnostic(Location(folder), "lesson has no steps", "add a step file like 01-intro.md")
        )
    expected = 1
    for number in sorted(seen):
        if number != expected:
            problems.append(
                Diagnostic(
                    Location(seen[number]),
                    f"step number {number} should be {expected}",
                    "number steps 01, 02, 03, … without gaps",
                )
            )
            break
        expected += 1
    if problems:
        raise LessonError(problems)
    return Lesson(
        id=str(meta["id"]),
        title=str(meta["title"]),
        chapter=str(meta["chapter"]),
        version=int(meta.get("version", 1)),
        path=folder,
        packages=tuple(str(p) for p in meta.get("packages", ()) or ()),
        time_limit=float(meta.get("time_limit", 30)),
        seed=int(meta.get("seed", 0)),
        steps=tuple(sorted(steps, key=lambda s: s.number)),
    )


def discover(lessons_dir: Path) -> list[Path]:
    """Every lesson folder directly under ``lessons_dir`` (those holding a lesson.yaml)."""
    lessons_dir = Path(lessons_dir)
    return sorted(p.parent for p in lessons_dir.glob(f"*/{LESSON_FILE}"))
