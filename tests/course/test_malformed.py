"""The malformed-lesson corpus: every mistake is reported with its file, line and message.

Each folder under ``tests/fixtures/malformed/`` holds one mistake. The table lists every diagnostic
its lesson must produce, so a run reports them all and nothing else.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from promptdojo.course import LessonError, load_lesson
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "fixtures" / "malformed"

# (fixture folder, file within it, line or None for the whole file, message)
EXPECTED = [
    (
        "bad-attribute-syntax",
        "01-a.md",
        5,
        "cannot parse cell attributes '{#a time_limit=}' "
        "(Unexpected character whilst scanning value: } at position 15)",
    ),
    ("bad-raises", "01-a.md", 5, "raises='Zero Division' is not an exception name"),
    ("bad-step-filename", "notes.md", None, "step file name does not start with a step number"),
    ("bad-time-limit", "01-a.md", 5, "time_limit='fast' is not a positive number of seconds"),
    ("check-for-unknown-exercise", "01-a.md", 14, "check for unknown exercise 'tripple'"),
    ("check-without-for", "01-a.md", 10, "a check cell needs for=EXERCISE_ID"),
    ("check-without-for", "01-a.md", 5, "exercise 'double' has no check"),
    ("duplicate-cell-id", "01-a.md", 9, "duplicate cell id 'same' (first used on line 5)"),
    ("duplicate-step-number", "01-b.md", None, "duplicate step number 1 (also 01-a.md)"),
    ("exercise-without-check", "01-a.md", 5, "exercise 'double' has no check"),
    (
        "front-matter-invalid",
        "01-a.md",
        3,  # "summary: [oops", where the bracket is never closed
        "invalid YAML in front matter: expected ',' or ']', but got '<stream end>' (column 15)",
    ),
    ("front-matter-odd-key", "01-a.md", 3, "unknown front matter key None"),
    ("front-matter-unknown-key", "01-a.md", 3, "unknown front matter key 'sumary'"),
    ("hint-for-unknown-exercise", "01-a.md", 14, "hint for unknown exercise 'doubel'"),
    ("hint-in-python", "01-a.md", 14, "a hint is prose, not python"),
    ("import-not-in-pyodide", "01-a.md", 7, "imports torch, which Pyodide 314.0.7 cannot provide"),
    (
        "import-undeclared",
        "01-a.md",
        6,
        "imports numpy, but lesson.yaml does not declare the package 'numpy'",
    ),
    ("lesson-bad-id", "lesson.yaml", 1, "lesson id 'Bad Id' is not a slug"),
    ("lesson-bad-type", "lesson.yaml", 4, "'seed' must be a whole number, not str"),
    ("lesson-missing-title", "lesson.yaml", 1, "lesson.yaml has no 'title'"),
    ("lesson-unknown-key", "lesson.yaml", 4, "unknown key 'sed'"),
    (
        "lesson-unknown-package",
        "lesson.yaml",
        4,
        "package 'numpyy' is not in the pinned Pyodide's pyodide-lock.json",
    ),
    ("missing-step-number", "03-c.md", None, "step number 3 should be 2"),
    ("no-ci-without-reason", "01-a.md", 5, "no-ci needs a reason"),
    ("no-steps", "", None, "lesson has no steps"),
    ("non-utf8", "01-a.md", 5, "file is not valid UTF-8"),
    ("solution-for-unknown-exercise", "01-a.md", 14, "solution for unknown exercise 'dubble'"),
    ("step-no-title", "01-a.md", 1, "step has no title"),
    ("syntax-error", "01-a.md", 7, "Python syntax error in cell 'cell-1': expected ':'"),
    ("two-kinds", "01-a.md", 5, "a cell has one kind, got setup, readonly"),
    ("unclosed-fence", "01-a.md", 7, "code fence is never closed"),
    ("unclosed-fence", "01-a.md", 10, "Python syntax error in cell 'cell-1': invalid syntax"),
    ("unknown-attribute", "01-a.md", 5, "unknown cell attribute 'tiem_limit'"),
    ("unknown-class", "01-a.md", 5, "unknown cell class 'exercize'"),
    (
        "yaml-invalid",
        "lesson.yaml",
        3,
        "invalid YAML in lesson.yaml: expected ',' or ']', but got '<stream end>' (column 1)",
    ),
    ("yaml-not-mapping", "lesson.yaml", 1, "lesson.yaml must be a mapping of keys to values"),
    ("wrong-for-unknown-exercise", "01-a.md", 14, "wrong answer for unknown exercise 'dubble'"),
    (
        "wrong-in-another-step",
        "02-b.md",
        5,
        "a wrong answer must be in the same step as its exercise; 'double' is at "
        f"{CORPUS / 'wrong-in-another-step' / '01-a.md'}:5",
    ),
    (
        "hint-in-another-step",
        "02-b.md",
        5,
        "a hint must be in the same step as its exercise; 'double' is at "
        f"{CORPUS / 'hint-in-another-step' / '01-a.md'}:5",
    ),
    ("wrong-without-for", "01-a.md", 14, "a wrong cell needs for=EXERCISE_ID"),
    ("expect-not-on-wrong", "01-a.md", 14, "expect= only goes on wrong-answer cells"),
    (
        "yaml-colon-in-title",
        "01-top-p.md",
        2,
        "invalid YAML in front matter: mapping values are not allowed here (column 13)",
    ),
    ("title-not-text", "01-top-p.md", 2, "the title must be text, not dict"),
]

BY_CASE: dict[str, list[tuple[str, int | None, str]]] = defaultdict(list)
for case, file, line, message in EXPECTED:
    BY_CASE[case].append((file, line, message))


def test_the_corpus_is_large_and_every_folder_is_listed() -> None:
    folders = {p.name for p in CORPUS.iterdir() if p.is_dir()}
    assert len(folders) >= 25
    assert folders == set(BY_CASE)


@pytest.mark.parametrize("case", sorted(BY_CASE))
def test_malformed_lesson_reports_file_line_and_message(case: str) -> None:
    folder = CORPUS / case
    with pytest.raises(LessonError) as info:
        load_lesson(folder)
    got = [
        (
            "" if d.location.path == folder else d.location.path.name,
            d.location.line,
            d.message,
        )
        for d in info.value.diagnostics
    ]
    assert got == BY_CASE[case]
    for diagnostic in info.value.diagnostics:
        text = str(diagnostic)
        assert text.startswith(str(folder)), text
        if diagnostic.location.line is not None:
            assert f".{diagnostic.location.path.suffix[1:]}:{diagnostic.location.line}: " in text


def test_did_you_mean_suggestions() -> None:
    cases = (
        "unknown-attribute",
        "unknown-class",
        "lesson-unknown-key",
        "hint-for-unknown-exercise",
    )
    hints = {}
    for case in cases:
        with pytest.raises(LessonError) as info:
            load_lesson(CORPUS / case)
        hints[case] = str(info.value.diagnostics[-1])
    assert hints["unknown-attribute"].endswith("did you mean 'time_limit'?")
    assert hints["unknown-class"].endswith("did you mean 'exercise'?")
    assert hints["lesson-unknown-key"].endswith("did you mean 'seed'?")
    assert hints["hint-for-unknown-exercise"].endswith("did you mean 'double'?")


def test_a_yaml_error_says_the_likely_fix_and_a_bad_title_falls_back_to_the_file_name() -> None:
    from promptdojo.course.parse import read_lesson

    with pytest.raises(LessonError) as info:
        load_lesson(CORPUS / "yaml-colon-in-title")
    (problem,) = info.value.diagnostics
    assert problem.hint == (
        'quote the title: it contains ": " (write title: "Top-p: nucleus sampling")'
    )
    for case in ("yaml-colon-in-title", "title-not-text"):
        (step,) = read_lesson(CORPUS / case).steps
        assert step.title == "Top p", case
