"""Scaffolding for authors: a new lesson, or the next step of one, that validates as written."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

from promptdojo.course.parse import LESSON_FILE, SLUG, STEP_FILE

LESSON_YAML = """\
id: {id}
title: {title}
chapter: {chapter}
# Pyodide packages the cells import (the standard library and promptdojo need none).
packages: []
# Seconds a cell may run before it is stopped; a cell can override it with time_limit=N.
time_limit: 30
# Seeds random and numpy's global generator before each step, so unseeded draws repeat
# (delete it for fresh numbers on every run).
seed: 0
"""

FIRST_STEP = """\
---
title: {title}
---

Write the step's prose here, in Markdown. Code cells are fenced `python` blocks.

```python
import random

rng = random.Random(0)
print("a seeded draw:", rng.randint(1, 6))
```

An exercise is starter code plus a hidden check; hints and a solution are optional.

```python {{#add .exercise}}
def add(a, b):
    return 0
```

```python {{.check for=add}}
assert add(2, 3) == 5, "add(2, 3) should be 5"
```

```markdown {{.hint for=add}}
Python's `+` adds two numbers.
```

```python {{.solution for=add}}
def add(a, b):
    return a + b
```
"""

NEXT_STEP = """\
---
title: {title_yaml}
---

Write the step's prose here.

```python
print({title_python})
```
"""


class ScaffoldError(ValueError):
    """The scaffold cannot be written; the message says why."""


def slugify(title: str) -> str:
    """``"Top-p, explained!"`` → ``"top-p-explained"``; ``"the target's"`` → ``"the-targets"``.

    Apostrophes join their word (as most blog and docs generators do), accents lose their marks,
    and every other run of non-alphanumerics becomes one dash.
    """
    text = unicodedata.normalize("NFKD", title.lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"['\u2019\u2018`]", "", text)
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    return slug or "step"


def new_lesson(lessons_dir: Path, lesson_id: str, title: str = "", chapter: str = "") -> Path:
    """Create ``lessons_dir/lesson_id`` with lesson.yaml and a first step; return the folder."""
    if not SLUG.match(lesson_id):
        raise ScaffoldError(
            f"lesson id {lesson_id!r} is not a slug: use lowercase letters, digits and dashes"
        )
    folder = lessons_dir / lesson_id
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists: pick another id or remove it")
    folder.mkdir(parents=True)
    title = title or lesson_id.replace("-", " ").capitalize()
    (folder / LESSON_FILE).write_text(
        LESSON_YAML.format(
            id=lesson_id,
            title=json.dumps(title, ensure_ascii=False),
            chapter=json.dumps(chapter or "ch 1 · Getting started", ensure_ascii=False),
        ),
        encoding="utf-8",
    )
    (folder / "01-introduction.md").write_text(
        FIRST_STEP.format(title="Introduction"), encoding="utf-8"
    )
    return folder


def new_step(lesson: Path, title: str, slug: str | None = None) -> Path:
    """Add the next numbered step file to the lesson folder ``lesson``; return its path.

    Its file is named from the title (``03-top-p-explained.md``), or from ``slug`` when given
    (a short name for a long title)."""
    if not (lesson / LESSON_FILE).is_file():
        raise ScaffoldError(f"{lesson} is not a lesson folder (it has no {LESSON_FILE})")
    if not title.strip():
        raise ScaffoldError("the step needs a title")
    if slug is not None and not STEP_FILE.match(f"01-{slug}.md"):
        raise ScaffoldError(
            f"--slug {slug!r} cannot name a step file: use lowercase letters, digits and dashes, "
            f"starting with a letter or digit (e.g. {slugify(slug)!r})"
        )
    numbers = [int(m["number"]) for p in lesson.glob("*.md") if (m := STEP_FILE.match(p.name))]
    number = max(numbers, default=0) + 1
    path = lesson / f"{number:02d}-{slug or slugify(title)}.md"
    # A JSON string is a valid YAML scalar, whatever the title holds.
    text = NEXT_STEP.format(title_yaml=json.dumps(title), title_python=repr(title))
    path.write_text(text, encoding="utf-8")
    return path


def add_to_course(lessons_dir: Path, lesson_id: str) -> Path | None:
    """List ``lesson_id`` last in the last chapter of ``lessons_dir``'s course file, if there is
    one (its comments and layout kept); return the file, or ``None`` without one."""
    from promptdojo.course.outline import COURSE_FILE, read_course

    course = read_course(lessons_dir)
    if course is None:
        return None
    chapters = [c for c in course.chapters if c.lines]
    if not chapters:
        raise ScaffoldError(
            f"{course.path} has no chapter with a list of lessons to add {lesson_id!r} to: "
            "add it under a chapter's `lessons:` yourself"
        )
    last = chapters[-1].lines[-1]
    lines = course.path.read_text(encoding="utf-8").splitlines(keepends=True)
    item = lines[last - 1]
    indent = item[: len(item) - len(item.lstrip())]
    if not item.lstrip().startswith("- "):
        raise ScaffoldError(
            f"{course.path}:{last}: the chapter's lessons are not a `- id` list a line: "
            f"add {lesson_id!r} to {COURSE_FILE} yourself"
        )
    if not item.endswith("\n"):
        lines[last - 1] = item + "\n"
    lines.insert(last, f"{indent}- {lesson_id}\n")
    course.path.write_text("".join(lines), encoding="utf-8")
    return course.path


def new_course_lesson(
    lessons_dir: Path, lesson_id: str, title: str = "", chapter: str = ""
) -> tuple[Path, Path | None]:
    """:func:`new_lesson`, then :func:`add_to_course`: the folder, and the course file that
    lists it now (``None`` without one)."""
    folder = new_lesson(lessons_dir, lesson_id, title=title, chapter=chapter)
    return folder, add_to_course(lessons_dir, lesson_id)
