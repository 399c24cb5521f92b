"""The course in Chromium: the map with its chapters and progress, "continue", the next-lesson
link, search, a broken lesson among good ones, and course links in an export below /course/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from promptdojo.web.export import export_site
from promptdojo.web.settings import Settings
from tests.e2e.conftest import Server, serious_violations, start_server, stop_server
from tests.support.course import make_course
from tests.support.static_host import headers_server


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The test course, a broken lesson among its good ones, served as to learners."""
    root = tmp_path_factory.mktemp("course")
    server = start_server(make_course(root, broken=True), root)
    yield server
    stop_server(server)


def test_the_map_shows_chapters_step_counts_and_the_broken_lesson(
    page: Page, course: Server
) -> None:
    page.goto(course.url + "/")
    expect(page.get_by_role("heading", level=1)).to_have_text("A test course")
    expect(page.get_by_role("heading", name="Chapter 3 Where code runs")).to_be_visible()
    expect(page.get_by_role("heading", name="Chapter 7 Turning knobs")).to_be_visible()
    knobs = page.locator("li[data-lesson=knobs]")
    expect(knobs).to_contain_text("2 steps")
    broken = page.locator("li.unavailable")
    expect(broken).to_have_text(re.compile(r"A lesson being written\s+unavailable: .*being fixed"))
    expect(broken.get_by_role("link")).to_have_count(0)
    # The good lessons open as before.
    knobs.get_by_role("link", name="Knobs").click()
    expect(page).to_have_url(course.url + "/lessons/knobs/1")


def test_continue_leads_to_the_first_step_not_done_by_keyboard(page: Page, course: Server) -> None:
    page.goto(course.url + "/")
    start = page.locator(".continue-link")
    expect(start).to_have_text("Start the course: Hello, Pyodide")
    page.goto(course.url + "/lessons/hello/1")
    page.goto(course.url + "/lessons/hello/2")  # steps 1 and 2 have no exercise: visited is done
    page.goto(course.url + "/")
    expect(page.locator("li[data-lesson=hello] .lesson-progress")).to_have_text("2 / 3 steps done")
    expect(start).to_have_text("Continue: Hello, Pyodide, step 3")
    for _ in range(10):  # the keyboard reaches it early: brand, search box, then "continue"
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('continue-link')"):
            break
    page.keyboard.press("Enter")
    expect(page).to_have_url(course.url + "/lessons/hello/3")


def test_the_last_step_links_to_the_next_lesson(page: Page, course: Server) -> None:
    page.goto(course.url + "/lessons/hello/3")
    expect(page.get_by_role("link", name="Next step")).to_have_count(0)
    page.get_by_role("link", name="Next lesson: Knobs").click()
    expect(page).to_have_url(course.url + "/lessons/knobs/1")


def test_search_opens_the_step_at_the_matching_heading(page: Page, course: Server) -> None:
    page.goto(course.url + "/")
    box = page.get_by_role("searchbox", name="Search the course")
    box.fill("further")
    result = page.locator(".search-results a").first
    expect(result).to_have_text("Where does this code run?: Further on")
    expect(page.locator(".search-summary")).to_contain_text("match “further”")
    box.press("Enter")  # the first result, from the keyboard
    expect(page).to_have_url(course.url + "/lessons/hello/1#further-on")
    expect(page.locator("#further-on")).to_be_in_viewport()
    page.goto(course.url + "/")
    page.get_by_role("searchbox", name="Search the course").fill("platform")  # code is searched
    expect(page.locator(".search-results a").first).to_have_text("Where does this code run?")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_map_is_axe_clean_at_390px(axe_page: Page, course: Server, scheme: str) -> None:
    axe_page.emulate_media(color_scheme=scheme)
    axe_page.set_viewport_size({"width": 390, "height": 844})
    axe_page.goto(course.url + "/")
    axe_page.get_by_role("searchbox", name="Search the course").fill("knob")
    expect(axe_page.locator(".search-results li").first).to_be_visible()
    assert axe_page.evaluate("document.documentElement.scrollWidth") <= 390
    assert serious_violations(axe_page) == []


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The test course (no broken lesson) exported below /course/, behind a static host that
    applies its ``_headers``."""
    root = tmp_path_factory.mktemp("course-export")
    site = root / "site"
    export_site(Settings(lessons_dir=make_course(root)), site / "course", base_url="/course/")
    with headers_server(site, site / "course" / "_headers") as url:
        yield url + "/course/"


def test_course_links_search_and_next_lesson_work_in_an_export_below_a_base(
    page: Page, exported: str
) -> None:
    page.goto(exported)
    expect(page.locator(".continue-link")).to_have_attribute("href", "/course/lessons/hello/1/")
    page.get_by_role("searchbox", name="Search the course").fill("further")
    page.locator(".search-results a").first.click()
    expect(page).to_have_url(exported + "lessons/hello/1/#further-on")
    page.get_by_role("link", name="plain").click()  # lesson:knobs/2#plain in the prose
    expect(page).to_have_url(exported + "lessons/knobs/2/#cell-plain")
    expect(page.locator("#cell-plain")).to_be_visible()
    page.goto(exported + "lessons/hello/3/")
    page.get_by_role("link", name="Next lesson: Knobs").click()
    expect(page).to_have_url(exported + "lessons/knobs/1/")
