"""The learner library's reference in Chromium: its pictures load under the app's policy, and
axe-core finds nothing serious."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.e2e.conftest import Server, serious_violations

PAGE = "/reference/promptdojo/display.html"


def test_the_display_page_draws_every_picture_under_the_policy(page: Page, server: Server) -> None:
    page.goto(f"{server.url}{PAGE}")
    widths = page.eval_on_selector_all(
        "img[alt^='What the example of']", "images => images.map(i => i.naturalWidth)"
    )
    assert widths
    assert all(width > 0 for width in widths), widths
    assert page.console_errors == []


def test_axe_finds_no_serious_violations_in_the_reference(axe_page: Page, server: Server) -> None:
    for path in ("/reference/", PAGE, "/reference/promptdojo/serving.html"):
        axe_page.goto(f"{server.url}{path}")
        assert serious_violations(axe_page) == [], path
