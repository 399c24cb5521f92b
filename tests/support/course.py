"""A small course made for a test: copies of the fixture lessons, a course.yaml, links between
them, and optionally a lesson with a mistake."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lessons"

COURSE_YAML = """\
title: A test course
parts:
  - title: First things
    chapters:
      - number: 3
        title: Where code runs
        lessons:
          - hello
  - title: Then knobs
    chapters:
      - number: 7
        title: Turning knobs
        lessons:
          - knobs
          - broken
"""

LINKS = (
    "\n## Further on\n\nThe knobs are in [the knobs lesson](lesson:knobs), their second step is "
    "[here](lesson:knobs/2) and its cell [plain](lesson:knobs/2#plain); back to "
    "[the exercise](/lessons/hello/3#double) and [this heading](lesson:hello/1#further-on).\n"
)


def make_course(root: Path, broken: bool = False, course_file: bool = True) -> Path:
    """A folder of lessons under ``root``: hello (with links), knobs, and perhaps ``broken``."""
    lessons = root / "lessons"
    for name in ("hello", "knobs"):
        shutil.copytree(FIXTURES / name, lessons / name)
    step = lessons / "hello" / "01-where-am-i.md"
    step.write_text(step.read_text() + LINKS)
    if broken:
        folder = lessons / "broken"
        folder.mkdir()
        (folder / "lesson.yaml").write_text(
            "id: broken\ntitle: A lesson being written\nchapter: x\n"
        )
        (folder / "01-a.md").write_text(
            "---\ntitle: A\n---\n\nProse.\n\n```python\nif True\n    pass\n```\n"
        )
    if course_file:
        text = COURSE_YAML if broken else COURSE_YAML.replace("          - broken\n", "")
        (lessons / "course.yaml").write_text(text)
    return lessons
