"""The parsed course is kept out of the cycle collector's sight once the server has read it: a
full collection would walk every object of every lesson while no request is answered."""

from __future__ import annotations

import gc
from pathlib import Path

from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings


def test_the_parsed_lessons_are_out_of_the_collectors_sight(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    app = create_app(Settings(lessons_dir=fixture_lessons, package_cache_dir=tmp_path / "pkgs"))
    lessons = list(app.state.site.catalog.lessons.values())
    assert lessons
    watched = {id(o) for o in gc.get_objects()}
    # Neither the lessons nor what they hold (their steps, cells, rendered prose) are walked.
    assert not [lesson.id for lesson in lessons if id(lesson) in watched]
    assert not [step.path for lesson in lessons for step in lesson.steps if id(step) in watched]
    assert gc.get_freeze_count() > 0
