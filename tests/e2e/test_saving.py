"""Nothing the learner types is lost: saved edits, Reset with undo, changed starters, export."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, wait_ready

EDIT_KEY = "promptdojo:v1:edit:runtime:1:one"


def editor_text(page: Page, cell_id: str) -> str:
    return page.locator(f"#cell-{cell_id} .cm-content").inner_text()


def type_into(page: Page, cell_id: str, text: str) -> None:
    page.locator(f"#cell-{cell_id} .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type(text)


def test_edits_survive_a_reload_and_step_changes(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    type_into(page, "one", "counter = 100")
    page.get_by_role("link", name="Next step").click()  # leaving saves at once
    page.get_by_role("link", name="Previous step").click()
    assert editor_text(page, "one") == "counter = 100"
    page.reload()
    assert editor_text(page, "one") == "counter = 100"
    saved = json.loads(page.evaluate(f"localStorage.getItem('{EDIT_KEY}')"))
    assert saved["code"] == "counter = 100"
    assert len(saved["starter"]) == 16


def test_reset_restores_the_starter_and_can_be_undone(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    type_into(page, "one", "counter = 5")
    cell = page.locator("#cell-one")
    cell.get_by_role("button", name="Reset").click()
    assert editor_text(page, "one") == "counter = 1"
    page.reload()
    assert editor_text(page, "one") == "counter = 1"  # the reset is saved too
    type_into(page, "one", "counter = 7")
    cell.get_by_role("button", name="Reset").click()
    cell.get_by_role("button", name="Undo reset").click()
    assert editor_text(page, "one") == "counter = 7"
    # The editor's own undo also brings the learner's code back.
    cell.get_by_role("button", name="Reset").click()
    page.locator("#cell-one .cm-content").click()
    page.keyboard.press("Control+z")
    assert editor_text(page, "one") == "counter = 7"


def test_a_changed_starter_asks_before_replacing_the_learners_code(
    page: Page, server: Server
) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    # As if saved when the author's starter was different.
    stale = json.dumps({"code": "counter = 3  # mine", "starter": "0000000000000000"})
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [EDIT_KEY, stale])
    page.reload()
    cell = page.locator("#cell-one")
    notice = cell.get_by_role("alert")
    expect(notice).to_contain_text("changed this cell's starting code")
    assert editor_text(page, "one") == "counter = 3  # mine"
    cell.get_by_role("button", name="Keep mine").click()
    expect(notice).to_be_hidden()
    page.reload()
    expect(notice).to_be_hidden()  # answered once, not asked again
    assert editor_text(page, "one") == "counter = 3  # mine"

    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [EDIT_KEY, stale])
    page.reload()
    cell.get_by_role("button", name="Use the new version").click()
    assert editor_text(page, "one") == "counter = 1"
    cell.get_by_role("button", name="Undo reset").click()
    assert editor_text(page, "one") == "counter = 3  # mine"


def test_export_then_import_restores_the_work(page: Page, server: Server, tmp_path: Path) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    type_into(page, "one", "counter = 11")
    page.get_by_role("link", name="Next step").click()
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export my work").click()
    exported = tmp_path / "work.json"
    download_info.value.save_as(exported)
    data = json.loads(exported.read_text())
    assert data["format"] == "promptdojo-work"
    assert data["items"]["edit:runtime:1:one"]["code"] == "counter = 11"

    page.evaluate("localStorage.clear()")
    page.goto(f"{server.url}/lessons/runtime/1")
    assert editor_text(page, "one") == "counter = 1"
    page.get_by_label("Import work").set_input_files(exported)
    expect(page.locator(".work-status")).to_contain_text("Imported 1 edited cell(s)")
    assert editor_text(page, "one") == "counter = 11"

    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    page.get_by_label("Import work").set_input_files(bad)
    expect(page.locator(".work-status")).to_contain_text("Nothing was changed")
    assert editor_text(page, "one") == "counter = 11"


def test_an_edit_just_typed_is_in_the_export_and_survives_leaving_the_page(
    page: Page, server: Server, tmp_path: Path
) -> None:
    """Edits are saved 300 ms after the last key: Export, and leaving the page (a full load
    elsewhere, or a closed tab), save the ones still waiting first."""
    page.goto(f"{server.url}/lessons/runtime/1")
    type_into(page, "one", "counter = 12")
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export my work").click()
    exported = tmp_path / "work.json"
    download_info.value.save_as(exported)
    assert json.loads(exported.read_text())["items"]["edit:runtime:1:one"]["code"] == "counter = 12"

    type_into(page, "one", "counter = 13")
    page.goto(f"{server.url}/")  # a page load, not a step swap: only pagehide is left to save
    assert (
        json.loads(page.evaluate(f"localStorage.getItem('{EDIT_KEY}')"))["code"] == "counter = 13"
    )


def test_progress_counts_visited_steps_and_solved_exercises(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    count = page.locator(".progress-count")
    expect(count).to_have_text("1 / 3")
    page.get_by_role("link", name="Next step").click()
    expect(count).to_have_text("2 / 3")
    page.get_by_role("link", name="Next step").click()
    # Step 3 has an exercise: visited is not done until it is solved.
    expect(count).to_have_text("2 / 3")
    steps = page.get_by_role("navigation", name="Lesson steps")
    expect(steps.locator("li[data-step='3'] .tick")).to_have_text("visited")
    wait_ready(page)
    type_into(page, "double", "def double(x):\n    return 2 * x")
    page.locator("#cell-double").get_by_role("button", name="Check").click()
    expect(page.locator("#cell-double .cell-status")).to_have_text("✓ Solved", timeout=30_000)
    expect(count).to_have_text("3 / 3")
    page.reload()
    expect(count).to_have_text("3 / 3")
    expect(steps.locator("li[data-step='3'] .tick")).to_have_text("✓ done")
    expect(page.locator("#cell-double .cell-status")).to_have_text("✓ Solved before")


def test_the_index_shows_each_lessons_progress(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/")
    hello = page.locator("li[data-lesson='hello'] .lesson-progress")
    expect(hello).to_be_hidden()  # nothing visited yet: nothing claimed
    page.goto(f"{server.url}/lessons/hello/1")
    page.get_by_role("link", name="Next step").click()
    expect(page).to_have_url(f"{server.url}/lessons/hello/2")
    page.goto(f"{server.url}/")
    expect(hello).to_have_text("2 / 3 steps done")
    expect(page.locator("li[data-lesson='runtime'] .lesson-progress")).to_be_hidden()


def test_an_edit_the_browser_refuses_to_store_is_announced_not_lost(
    page: Page, server: Server
) -> None:
    # As in a browser whose storage is full: every write fails.
    page.add_init_script(
        """Storage.prototype.setItem = function () {
          throw new DOMException("quota", "QuotaExceededError");
        };"""
    )
    page.goto(f"{server.url}/lessons/runtime/1")
    type_into(page, "one", "counter = 9")
    notice = page.locator("#cell-one").get_by_role("alert")
    expect(notice).to_contain_text("did not let promptdojo save your edit")
    assert editor_text(page, "one") == "counter = 9"


def test_hints_open_in_order_and_the_solution_after_them_or_a_failed_check(
    page: Page, server: Server, tmp_path: Path
) -> None:
    page.goto(f"{server.url}/lessons/hello/3")
    cell = page.locator("#cell-double")
    hints = cell.locator("details.hint")
    solution = cell.locator("details.solution")
    anyway = cell.get_by_role("button", name="Show the solution anyway")
    expect(hints.nth(0)).to_be_visible()
    expect(hints.nth(1)).to_be_hidden()
    expect(solution).to_be_hidden()
    hints.nth(0).locator("summary").click()
    expect(hints.nth(1)).to_be_visible()
    expect(solution).to_be_hidden()
    expect(anyway).to_be_hidden()
    # A failed Check offers the solution before the last hint.
    wait_ready(page)
    cell.get_by_role("button", name="Check").click()
    expect(cell.locator(".cell-status")).to_contain_text("Not yet", timeout=30_000)
    expect(anyway).to_be_visible()
    page.reload()  # the state is saved: hint 1 open, hint 2 offered, the offer still there
    expect(hints.nth(0)).to_have_attribute("open", "")
    expect(hints.nth(1)).to_be_visible()
    expect(anyway).to_be_visible()
    expect(solution).to_be_hidden()
    anyway.click()
    expect(solution).to_be_visible()
    expect(solution.locator("code")).to_contain_text("return 2 * x")

    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export my work").click()
    exported = tmp_path / "work.json"
    download_info.value.save_as(exported)
    page.evaluate("localStorage.clear()")
    page.reload()
    expect(hints.nth(1)).to_be_hidden()
    expect(solution).to_be_hidden()
    page.get_by_label("Import work").set_input_files(exported)
    expect(page.locator(".work-status")).to_contain_text("Imported")
    expect(hints.nth(1)).to_be_visible()
    expect(solution).to_be_visible()
