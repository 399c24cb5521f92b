"""No run-order trap: a cell pressed (or a control moved) before the cells above it ran runs
those first, with their outputs and one quiet line; a lesson can turn that off; a NameError says
which cell defines the missing name (static/js/page/order.js)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, click_run, run, wait_ready


def test_running_a_later_cell_first_runs_the_cells_above(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    wait_ready(page)
    three = click_run(page, "three")
    expect(three.locator(".cell-status")).to_contain_text("Done in", timeout=30_000)
    expect(three.locator(".cell-output")).to_have_text("20")
    # The cells above ran, in order, each showing its own output and status.
    expect(page.locator("#cell-one .cell-status")).to_contain_text("Done in")
    expect(page.locator("#cell-two .cell-output")).to_have_text("2")
    note = three.locator(".order-note")
    expect(note).to_have_text("Ran 2 cells above first (“one”, “two”): not yet run in this Python.")
    # Run again: the cells above have run in this Python, so nothing else runs, and no line.
    run(page, "three")
    expect(three.locator(".cell-output")).to_have_text("20")
    expect(note).to_be_hidden()
    expect(page.locator("#cell-two .cell-output")).to_have_text("2")
    assert page.console_errors == []


def test_moving_a_control_first_runs_the_cells_above(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/knobs/1")
    wait_ready(page)
    slider = page.locator("#cell-slow input[type=range]")
    slider.focus()
    page.keyboard.press("ArrowRight")
    slow = page.locator("#cell-slow")
    expect(slow.locator(".cell-output > pre.stdout")).to_have_text("v=1\n", timeout=30_000)
    expect(page.locator("#cell-later .cell-output")).to_have_text("later sees T=1.00\n")
    expect(slow.locator(".order-note")).to_contain_text("(“temp”, “later”)")


def test_a_name_error_says_which_cell_defines_the_name(page: Page, server: Server) -> None:
    # The runaway lesson turns running the cells above off (its cells spin for ever).
    page.goto(f"{server.url}/lessons/runaway/1")
    wait_ready(page)
    after = click_run(page, "after")
    output = after.locator(".cell-output")
    expect(output.locator(".error")).to_contain_text("NameError: name 'a' is not defined")
    expect(output.locator(".name-hint")).to_have_text(
        "“a” is defined by this step's cell “state”: run it first."
    )
    expect(page.locator("#cell-state .cell-status")).to_have_text("")
    expect(after.locator(".order-note")).to_have_count(0)


def test_a_name_from_an_earlier_step_says_which_step_defines_it(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/3")
    wait_ready(page)
    cell = page.locator("#cell-fresh")
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("counter")
    page.keyboard.press("Control+Enter")
    expect(cell.locator(".name-hint")).to_have_text(
        "“counter” is defined in step 1 (“State builds up cell by cell”), cell “one”: each step"
        " has its own Python namespace, so define or import it in this step too.",
        timeout=30_000,
    )
