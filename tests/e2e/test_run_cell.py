"""The whole path: lesson file → server → page → worker → Pyodide → output under the cell."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, click_run, wait_ready


def test_run_prints_output_made_by_pyodide_in_the_worker(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    assert page.evaluate("crossOriginIsolated") is True
    first = page.locator(".cell").nth(0)
    first.get_by_role("button", name="Run", exact=True).click()
    # Only Pyodide reports sys.platform == "emscripten"; CPython on the server would say "linux".
    expect(first.locator(".cell-output")).to_have_text("platform: emscripten", timeout=20_000)
    assert page.console_errors == []


def test_cells_share_the_step_namespace_and_show_the_last_value(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    second = page.locator(".cell").nth(1)
    second.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\nanswer + 1")
    page.keyboard.press("Control+Enter")
    expect(second.locator(".cell-output")).to_have_text("43", timeout=20_000)


def test_traceback_is_numbered_in_the_cell_and_hides_the_runtime(
    page: Page, server: Server
) -> None:
    page.goto(f"{server.url}/lessons/hello/2")
    wait_ready(page)
    cell = page.locator(".cell").nth(0)
    cell.get_by_role("button", name="Run", exact=True).click()
    output = cell.locator(".cell-output .error")
    expect(output).to_contain_text("ZeroDivisionError: division by zero", timeout=20_000)
    text = output.inner_text()
    assert 'File "<cell cell-1>", line 5' in text
    assert 'File "<cell cell-1>", line 2, in inverse' in text
    assert "kernel.py" not in text
    assert "pyodide" not in text.lower()


def test_missing_package_fails_at_once_with_a_clear_message(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/needs-numpy/1")
    wait_ready(page)
    expect(page.locator(".kernel-status")).to_contain_text("without numpy")
    cell = page.locator(".cell").nth(0)
    cell.get_by_role("button", name="Run", exact=True).click()
    error = cell.locator(".cell-output .error")
    expect(error).to_contain_text("ModuleNotFoundError: numpy is not available", timeout=10_000)
    expect(error).to_contain_text("`promptdojo pyodide fetch numpy`")


def test_exercise_check_hints_solution_and_hidden_setup(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/3")
    wait_ready(page)
    # The read-only cell sees the hidden setup's `greeting`.
    shout = click_run(page, "shout")
    expect(shout.locator(".cell-output")).to_have_text("HELLO", timeout=20_000)
    shout.locator(".cm-content").click()
    page.keyboard.type("x = 1")
    expect(shout.locator(".cm-content")).to_have_text("print(greeting.upper())")
    assert shout.locator(".cm-content").get_attribute("aria-readonly") == "true"

    oops = click_run(page, "oops")
    expect(oops.locator(".cell-status")).to_have_text("Raised KeyError, as expected")

    exercise = page.locator("#cell-double")
    exercise.get_by_role("button", name="Check").click()
    expect(exercise.locator(".cell-status")).to_have_text("Not yet: double(2) should be 4")
    expect(exercise.locator("details.hint")).to_have_count(2)
    exercise.locator("details.hint").nth(0).locator("summary").click()
    expect(exercise.locator("details.hint").nth(0)).to_contain_text("Multiplication is allowed.")

    exercise.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("def double(x):\n    return 2 * x\n")
    exercise.get_by_role("button", name="Check").click()
    expect(exercise.locator(".cell-status")).to_have_text("✓ Solved")


def test_recorded_output_paints_first_and_running_replaces_it(page: Page, server: Server) -> None:
    page.route("**/assets/pyodide/**", lambda route: None)  # hold Python back: never ready
    page.goto(f"{server.url}/lessons/hello/1")
    first = page.locator(".cell").nth(0)
    recorded = first.locator(".cell-output .recorded")
    expect(recorded).to_be_visible()
    expect(recorded).to_contain_text("recorded output")
    expect(recorded).to_contain_text("platform: linux")  # recorded by the CPython check
    assert page.locator(".kernel-status").get_attribute("data-phase") != "ready"


def test_running_replaces_the_recorded_output(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    first = page.locator(".cell").nth(0)
    expect(first.locator(".recorded")).to_have_count(1)
    first.get_by_role("button", name="Run", exact=True).click()
    expect(first.locator(".cell-output")).to_have_text("platform: emscripten", timeout=20_000)
    expect(first.locator(".recorded")).to_have_count(0)


#: Holds the page's idle callbacks until the test runs them (window.__idle.run()), so that what
#: a step makes in idle turns waits for the test: the editors below its first screen.
HOLD_IDLE = """
window.__idle = { held: [], run() { while (this.held.length) this.held.shift()(); } };
window.requestIdleCallback = (work) => window.__idle.held.push(work);
"""


def test_editors_below_the_first_screen_come_later_and_a_cell_runs_without_its_own(
    page: Page, server: Server
) -> None:
    page.set_viewport_size({"width": 800, "height": 560})
    page.add_init_script(HOLD_IDLE)
    page.goto(f"{server.url}/lessons/hello/3")
    wait_ready(page)
    cells = page.locator(".cell")
    count = cells.count()
    made = page.locator(".cell .cm-editor").count()
    assert 0 < made < count, (made, count)
    # The last cell still shows its code as the server wrote it, and runs that code.
    last = cells.nth(count - 1)
    expect(last.locator(".cell-source")).to_have_text('print("this would fetch something")')
    last.get_by_role("button", name="Run", exact=True).click()
    expect(last.locator(".cell-output")).to_have_text("this would fetch something", timeout=20_000)
    # A reset needs the editor: it is made then, holding the starter.
    exercise = page.locator("#cell-double")
    assert exercise.locator(".cm-editor").count() == 0
    exercise.get_by_role("button", name="Reset").click()
    expect(exercise.locator(".cm-content")).to_have_text("def double(x):    return x")
    # The idle turns make the rest, and the page ends with an editor in every cell. Each editor
    # is as tall as the code it replaced: the last cell's buttons stay where they were.
    made = page.locator(".cell .cm-editor").count()
    assert made < count - 1, (made, count)
    toolbar = last.locator(".cell-toolbar")
    before = toolbar.bounding_box()
    page.evaluate("window.__idle.run()")
    expect(page.locator(".cell .cm-editor")).to_have_count(count)
    after = toolbar.bounding_box()
    assert before is not None
    assert after is not None
    assert abs(after["y"] - before["y"]) < 1, (before, after)
    expect(last.locator(".cm-content")).to_have_text('print("this would fetch something")')
    assert page.console_errors == []


def test_a_step_opened_at_an_anchor_makes_every_editor_at_once(page: Page, server: Server) -> None:
    page.set_viewport_size({"width": 800, "height": 560})
    page.add_init_script(HOLD_IDLE)
    page.goto(f"{server.url}/lessons/hello/3#cell-network")
    wait_ready(page)
    # Every editor while no idle callback may run: none of them waited for one. (The held
    # callbacks are not counted: CodeMirror's own parser asks for idle time too, when a slow
    # machine leaves an editor's first parse unfinished.)
    expect(page.locator(".cell .cm-editor")).to_have_count(page.locator(".cell").count())
