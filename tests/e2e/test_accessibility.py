"""Keyboard-only use, accessible names, narrow screens, both themes, and an axe-core scan."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, click_run, run, serious_violations, wait_ready


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violations_on_a_step(
    axe_page: Page, server: Server, scheme: str
) -> None:
    axe_page.emulate_media(color_scheme=scheme)
    axe_page.goto(f"{server.url}/lessons/hello/3")
    wait_ready(axe_page)
    run(axe_page, "shout")
    axe_page.locator("#cell-double details.hint").first.locator("summary").click()
    assert serious_violations(axe_page) == []


def test_buttons_and_links_have_their_names(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/2")
    cell = page.locator(".cell").first
    for name in ("Run", "Stop", "Reset"):
        expect(cell.get_by_role("button", name=name, exact=True)).to_have_count(1)
    expect(page.get_by_role("link", name="Next step")).to_have_count(1)
    expect(page.get_by_role("link", name="Previous step")).to_have_count(1)
    expect(cell.locator(".cell-output")).to_have_attribute("aria-live", "polite")
    expect(page.locator(".kernel-status")).to_have_attribute("aria-live", "polite")


def test_escape_then_tab_leaves_the_editor(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    page.locator(".cell").first.locator(".cm-content").click()
    page.keyboard.press("Tab")  # inside the editor, Tab indents
    assert page.evaluate("document.activeElement.classList.contains('cm-content')")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Run"
    page.keyboard.press("Enter")  # and the keyboard alone runs the cell
    expect(page.locator(".cell").first.locator(".cell-output")).to_contain_text("emscripten")


def test_a_390px_screen_shows_everything_without_sideways_scrolling(
    page: Page, server: Server
) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{server.url}/lessons/hello/3")
    wait_ready(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for name in ("Run", "Check", "Reset"):
        button = page.locator("#cell-double").get_by_role("button", name=name, exact=True)
        box = button.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 390
    click_run(page, "double")
    expect(page.locator("#cell-double .cell-status")).to_contain_text("Done")


def test_maths_renders_as_mathml_and_axe_stays_clean(
    axe_page: Page, server: Server, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """$…$ and $$…$$ are drawn by the browser from MathML: no script, no network request."""
    from tests.e2e.conftest import start_server, stop_server

    root = tmp_path_factory.mktemp("maths")
    lesson = root / "lessons" / "maths"
    lesson.mkdir(parents=True)
    (lesson / "lesson.yaml").write_text("id: maths\ntitle: Maths\nchapter: ch 1\n")
    (lesson / "01-ratio.md").write_text(
        "---\ntitle: The acceptance ratio\n---\n\nAccept a draft token with probability\n"
        "$\\min\\left(1, \\frac{p(x)}{q(x)}\\right)$, where $p$ is the target.\n\n"
        "$$\nr = \\sum_{i=1}^{n} \\alpha_i\n$$\n\n```python\nprint('ok')\n```\n"
    )
    maths_server = start_server(lesson.parent, root)
    requests: list[str] = []
    axe_page.on("request", lambda r: requests.append(r.url))
    try:
        axe_page.goto(f"{maths_server.url}/lessons/maths/1")
        formulas = axe_page.locator("article math")
        expect(formulas).to_have_count(3)
        box = formulas.nth(0).bounding_box()
        assert box is not None
        assert box["width"] > 20, "Chromium lays the MathML out"
        assert axe_page.locator("article .math-error").count() == 0
        assert all(r.startswith(maths_server.url) for r in requests), requests
        assert serious_violations(axe_page) == []
    finally:
        stop_server(maths_server)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_cell_controls_are_axe_clean_and_fit_390px(
    axe_page: Page, server: Server, scheme: str
) -> None:
    axe_page.emulate_media(color_scheme=scheme)
    axe_page.set_viewport_size({"width": 390, "height": 844})
    axe_page.goto(f"{server.url}/lessons/knobs/1")
    wait_ready(axe_page)
    cell = axe_page.locator("#cell-temp")
    slider = cell.get_by_role("slider", name="temperature")
    slider.focus()
    axe_page.keyboard.press("ArrowRight")
    expect(cell.locator(".cell-output pre.stdout")).to_have_text("T=1.05 model=small\n")
    expect(slider).to_have_attribute("aria-valuetext", "1.05")
    expect(cell.get_by_role("group", name="Controls of cell temp")).to_be_visible()
    expect(cell.get_by_role("combobox", name="model")).to_be_visible()
    expect(cell.get_by_role("checkbox", name="loud")).to_be_visible()
    assert axe_page.evaluate("document.documentElement.scrollWidth") <= 390
    for control in (slider, cell.get_by_role("combobox", name="model")):
        box = control.bounding_box()
        assert box is not None
        assert box["x"] + box["width"] <= 390
    assert serious_violations(axe_page) == []
