"""`promptdojo serve --reload`: editing a step file refreshes the open page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, run, start_server, stop_server, wait_ready


@pytest.fixture
def authoring(fixture_lessons: Path, tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    lessons = tmp_path / "lessons"
    shutil.copytree(fixture_lessons / "hello", lessons / "hello")
    server = start_server(lessons, tmp_path, "--reload")
    yield server, lessons / "hello"
    stop_server(server)


def test_editing_a_step_refreshes_the_open_page(page: Page, authoring: tuple[Server, Path]) -> None:
    server, lesson = authoring
    page.goto(f"{server.url}/lessons/hello/1")
    expect(page.locator("h1")).to_have_text("Where does this code run?")
    page.wait_for_timeout(500)  # let the page's event stream connect
    step = lesson / "01-where-am-i.md"
    step.write_text(step.read_text().replace("Where does this code run?", "Edited live"))
    expect(page.locator("h1")).to_have_text("Edited live", timeout=15_000)
    # Python finishes booting before the server stops: no request is cut off mid-flight.
    wait_ready(page)


def test_breaking_a_lesson_shows_its_errors_then_fixing_it_recovers(
    page: Page, authoring: tuple[Server, Path]
) -> None:
    server, lesson = authoring
    page.goto(f"{server.url}/lessons/hello/2")
    page.wait_for_timeout(500)
    step = lesson / "02-errors.md"
    good = step.read_text()
    step.write_text(good.replace("def inverse(x):", "def inverse(x)"))
    problems = page.locator(".lesson-problems")
    expect(problems).to_contain_text("This step has 1 problem", timeout=15_000)
    expect(problems.locator(".diagnostics")).to_contain_text("02-errors.md:6: Python syntax error")
    expect(page.locator("article h1")).to_have_text("Errors point at your line")
    step.write_text(good)
    expect(problems).to_have_count(0, timeout=15_000)
    expect(page.locator("article h1")).to_have_text("Errors point at your line")
    wait_ready(page)


def test_a_typo_in_step_3_leaves_steps_1_and_2_runnable(page: Page, tmp_path: Path) -> None:
    """The instructor's loop: a mistake in one step never hides the others, nor is it a 500."""
    lessons = tmp_path / "lessons"
    lesson = lessons / "spec"
    lesson.mkdir(parents=True)
    (lesson / "lesson.yaml").write_text("id: spec\ntitle: Speculative\nchapter: ch 1\n")
    bodies = {1: "print('one', 1 + 1)", 2: "print('two', 2 * 2)", 3: "k = 4\nif k\n    pass"}
    for n, body in bodies.items():
        (lesson / f"0{n}-s{n}.md").write_text(
            f"---\ntitle: Step {n}\n---\n\nProse {n}.\n\n```python {{#c{n}}}\n{body}\n```\n"
        )
    server = start_server(lessons, tmp_path, "--reload")
    try:
        for n, shown in ((1, "one 2"), (2, "two 4")):
            response = page.goto(f"{server.url}/lessons/spec/{n}")
            assert response is not None
            assert response.status == 200
            expect(page.locator(".lesson-problems")).to_have_count(0)
            wait_ready(page)
            run(page, f"c{n}")
            expect(page.locator(f"#cell-c{n} .cell-output")).to_contain_text(shown)
        response = page.goto(f"{server.url}/lessons/spec/3")
        assert response is not None
        assert response.status == 200
        problems = page.locator(".lesson-problems")
        expect(problems).to_contain_text("This step has 1 problem")
        expect(problems).to_contain_text("03-s3.md:9: Python syntax error in cell 'c3'")
        expect(page.locator("article h1")).to_have_text("Step 3")
        page.goto(server.url + "/")
        expect(page.locator("main")).not_to_contain_text("No lessons here yet")
        expect(page.locator(".lesson-list li.unavailable")).to_contain_text("Speculative")
    finally:
        stop_server(server)


def test_a_prose_save_keeps_python_and_the_outputs_and_a_code_save_marks_the_cell(
    page: Page, authoring: tuple[Server, Path]
) -> None:
    server, lesson = authoring
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    run(page, "cell-1")
    first = page.locator("#cell-cell-1 .cell-output")
    expect(first).to_contain_text("platform: emscripten")
    page.evaluate("window.sameDocument = true")
    step = lesson / "01-where-am-i.md"
    step.write_text(step.read_text().replace("need only the standard library", "run anywhere"))
    expect(page.locator("article")).to_contain_text(
        "This step's cells run anywhere.", timeout=15_000
    )
    assert page.evaluate("window.sameDocument") is True, "the page was not reloaded"
    expect(first).to_contain_text("platform: emscripten")
    expect(page.locator(".kernel-status")).to_have_attribute("data-phase", "ready")

    step.write_text(step.read_text().replace("answer = 6 * 7", "answer = 6 * 8"))
    notice = page.locator("#cell-cell-2 .cell-notice")
    expect(notice).to_contain_text("This cell changed in the lesson file", timeout=15_000)
    expect(page.locator("#cell-cell-1 .cell-notice")).to_be_hidden()
    assert page.evaluate("window.sameDocument") is True
    expect(first).to_contain_text("platform: emscripten")
