"""Moving between steps swaps the page in place: the kernel worker and its namespaces live on."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, run, wait_ready


def worker_of(page: Page) -> object:
    """A token that changes whenever the page reloads or the worker is replaced."""
    return page.evaluate("window.promptdojoKernel.worker.__token ??= Math.random()")


def test_next_previous_and_browser_history_keep_the_worker(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    wait_ready(page)
    token = worker_of(page)
    run(page, "one")

    page.get_by_role("link", name="Next step").click()
    expect(page).to_have_url(f"{server.url}/lessons/runtime/2")
    expect(page.get_by_role("heading", level=1)).to_have_text("Rich output and typing")
    expect(page).to_have_title(
        "Rich output and typing · What the browser runtime does · promptdojo"
    )
    # Runnable at once: no reload, no new boot.
    expect(page.locator(".kernel-status")).to_have_attribute("data-phase", "ready")
    assert worker_of(page) == token

    page.get_by_role("link", name="Previous step").click()
    expect(page).to_have_url(f"{server.url}/lessons/runtime/1")
    # Step 1's namespace survived the round trip: `counter` is still 1.
    run(page, "two")
    expect(page.locator("#cell-two .cell-output")).to_have_text("2")

    # History holds 1, 2, 1: back shows step 2, forward step 1 again, each in place.
    page.go_back()
    expect(page.get_by_role("heading", level=1)).to_have_text("Rich output and typing")
    expect(page).to_have_url(f"{server.url}/lessons/runtime/2")
    page.go_forward()
    expect(page.get_by_role("heading", level=1)).to_have_text("State builds up cell by cell")
    expect(page.locator("#cell-two .cell-status")).to_have_text("")
    assert worker_of(page) == token


def test_step_list_and_keyboard_shortcuts_navigate(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    wait_ready(page)
    token = worker_of(page)
    steps = page.get_by_role("navigation", name="Lesson steps")
    steps.get_by_role("link", name="Each step has its own namespace").click()
    expect(page).to_have_url(f"{server.url}/lessons/runtime/3")
    expect(steps.locator("a[aria-current=step]")).to_have_text("Each step has its own namespace")
    # Steps do not share names: step 1's `counter` is not here.
    run(page, "fresh")
    expect(page.locator("#cell-fresh .cell-output")).to_have_text("False")

    page.keyboard.press("Alt+PageUp")
    expect(page).to_have_url(f"{server.url}/lessons/runtime/2")
    page.keyboard.press("Alt+PageDown")
    expect(page).to_have_url(f"{server.url}/lessons/runtime/3")
    assert worker_of(page) == token


def test_a_deep_link_loads_any_step_in_full(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/3#cell-fresh")
    expect(page.get_by_role("heading", level=1)).to_have_text("Each step has its own namespace")
    wait_ready(page)
    run(page, "fresh")
    expect(page.locator("#cell-fresh .cell-output")).to_have_text("False")


def test_a_link_to_another_lesson_is_an_ordinary_page_load(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    wait_ready(page)
    page.evaluate("window.__sameDocument = true")
    page.evaluate(
        """() => {
          const a = document.querySelector('a[rel=next]');
          a.href = '/lessons/hello/2';
        }"""
    )
    page.get_by_role("link", name="Next step").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Errors point at your line")
    assert page.evaluate("window.__sameDocument") is None


def test_run_all_above_runs_the_earlier_cells_in_order(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/1")
    wait_ready(page)
    three = page.locator("#cell-three")
    three.get_by_role("button", name="Run all above").click()
    expect(page.locator("#cell-two .cell-output")).to_have_text("2", timeout=30_000)
    expect(page.locator("#cell-one .cell-status")).to_contain_text("Done")
    run(page, "three")
    expect(three.locator(".cell-output")).to_have_text("20")
    assert page.locator("#cell-one").get_by_role("button", name="Run all above").count() == 0


def test_the_neighbouring_steps_are_fetched_once_python_is_ready(
    page: Page, server: Server
) -> None:
    """During the boot they would take a connection and link time from its downloads."""
    page.goto(f"{server.url}/lessons/runtime/2")
    wait_ready(page)
    neighbours = [f"{server.url}/lessons/runtime/{n}" for n in (1, 3)]
    page.wait_for_function(
        "(urls) => urls.every((u) => performance.getEntriesByName(u).length)", arg=neighbours
    )
    started = page.evaluate(
        "(urls) => urls.map((u) => performance.getEntriesByName(u)[0].startTime)", neighbours
    )
    ready = page.evaluate("performance.getEntriesByName('pd:ready')[0].startTime")
    assert all(at >= ready for at in started), (started, ready)
    # The next step still swaps in place.
    page.get_by_role("link", name="Next step").click()
    expect(page).to_have_url(neighbours[1])
    expect(page.locator(".kernel-status")).to_have_attribute("data-phase", "ready")
