"""Controls bound to a cell (promptdojo.ui) in Chromium: live re-runs, state, checks, refusals."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, run, wait_ready

STEP = "knobs/1"
KEY = "promptdojo:v1:controls:knobs:1:temp"


def open_step(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/{STEP}")
    wait_ready(page)


def temperature(page: Page):
    return page.locator("#cell-temp").get_by_label("temperature", exact=True)


def stdout(page: Page, cell_id: str):
    return page.locator(f"#cell-{cell_id} .cell-output > pre.stdout")


def test_moving_a_slider_by_keyboard_reruns_the_cell(page: Page, server: Server) -> None:
    open_step(page, server)
    # Drawn from the author's code before the cell first runs; the recorded output shows.
    expect(page.locator("#cell-temp .recorded")).to_contain_text("T=1.00 model=small")
    slider = temperature(page)
    expect(slider).to_have_attribute("type", "range")
    cell = page.locator("#cell-temp")
    expect(cell.locator("output.control-value").first).to_have_text("1.00")
    slider.focus()
    page.keyboard.press("ArrowRight")
    expect(stdout(page, "temp")).to_have_text("T=1.05 model=small\n")
    expect(cell.locator("output.control-value").first).to_have_text("1.05")
    page.keyboard.press("End")
    expect(stdout(page, "temp")).to_have_text("T=2.00 model=small\n")
    page.keyboard.press("Home")
    expect(stdout(page, "temp")).to_have_text("T=0.00 model=small\n")
    # The other kinds: a drop-down and a checkbox, by keyboard too.
    cell.get_by_label("model").select_option("large")
    expect(stdout(page, "temp")).to_have_text("T=0.00 model=large\n")
    cell.get_by_label("loud").press("Space")
    expect(stdout(page, "temp")).to_have_text("T=0.00 MODEL=LARGE\n")
    # Later cells are not re-run, and the cell says so.
    expect(cell.locator(".controls-note")).to_contain_text("Later cells use the old value")
    expect(cell.get_by_label("loud")).to_be_focused()  # re-running keeps focus on the control


def test_ten_rapid_changes_leave_one_final_output_and_no_backlog(
    page: Page, server: Server
) -> None:
    open_step(page, server)
    run(page, "slow")
    expect(stdout(page, "slow")).to_have_text("v=0\n")
    page.locator("#cell-slow").get_by_label("v", exact=True).focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    expect(stdout(page, "slow")).to_have_text("v=10\n", timeout=30_000)
    expect(page.locator("#cell-slow .cell-status")).to_contain_text("Done in")
    # Nothing left queued behind the final run; only a few of the ten changes ever ran.
    assert page.evaluate("window.promptdojoKernel.runs.size") == 0
    assert page.evaluate("window.promptdojoKernel.current") is None
    runs = run_code_in(page, "knobs/1", "print(runs)")
    # Each change either ran (interrupted or not) or was folded into a later run.
    assert 2 <= int(runs) <= 11, runs
    expect(stdout(page, "slow")).to_have_count(1)


def run_code_in(page: Page, key: str, code: str) -> str:
    """Run ``code`` in the namespace ``key`` of the page's kernel; return what it printed."""
    return page.evaluate(
        """async ([key, code]) => {
          let out = "";
          const onStream = (name, text) => { out += text; };
          const result = await window.promptdojoKernel.run(code, { key, cellId: "q", onStream });
          return result.ok ? out : `${result.error_type}: ${result.error_message}`;
        }""",
        [key, code],
    )


def test_values_survive_a_reload_and_a_step_round_trip(page: Page, server: Server) -> None:
    open_step(page, server)
    run(page, "temp")
    temperature(page).focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect(stdout(page, "temp")).to_have_text("T=0.90 model=small\n")
    assert json.loads(page.evaluate(f"localStorage.getItem('{KEY}')")) == {"temperature": 0.9}
    page.get_by_role("link", name="Next step").click()
    page.get_by_role("link", name="Previous step").click()
    wait_ready(page)
    run(page, "temp")
    expect(stdout(page, "temp")).to_have_text("T=0.90 model=small\n")
    expect(temperature(page)).to_have_value("0.9")
    page.reload()
    wait_ready(page)
    run(page, "temp")
    expect(stdout(page, "temp")).to_have_text("T=0.90 model=small\n")
    run(page, "later")
    expect(stdout(page, "later")).to_have_text("later sees T=0.90\n")


def test_reset_export_and_import(page: Page, server: Server, tmp_path: Path) -> None:
    open_step(page, server)
    run(page, "temp")
    temperature(page).focus()
    page.keyboard.press("ArrowRight")
    expect(stdout(page, "temp")).to_have_text("T=1.05 model=small\n")
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Export my work").click()
    exported = tmp_path / "work.json"
    download_info.value.save_as(exported)
    data = json.loads(exported.read_text())
    assert data["items"]["controls:knobs:1:temp"] == {"temperature": 1.05}

    cell = page.locator("#cell-temp")
    cell.get_by_role("button", name="Reset").click()
    expect(temperature(page)).to_have_value("1")
    assert page.evaluate(f"localStorage.getItem('{KEY}')") is None
    cell.get_by_role("button", name="Undo reset").click()  # brings the learner's value back
    expect(temperature(page)).to_have_value("1.05")
    cell.get_by_role("button", name="Reset").click()
    expect(temperature(page)).to_have_value("1")
    run(page, "temp")
    expect(stdout(page, "temp")).to_have_text("T=1.00 model=small\n")

    page.get_by_label("Import work").set_input_files(exported)
    expect(page.locator(".work-status")).to_contain_text("Imported")
    assert json.loads(page.evaluate(f"localStorage.getItem('{KEY}')")) == {"temperature": 1.05}


def test_an_exercise_check_sees_the_value_the_learner_chose(page: Page, server: Server) -> None:
    open_step(page, server)
    cell = page.locator("#cell-pick")
    cell.get_by_role("button", name="Check").click()
    expect(cell.locator(".cell-status")).to_contain_text("Not yet: n is 0", timeout=30_000)
    slider = cell.get_by_label("n", exact=True)
    slider.focus()
    for _ in range(7):
        page.keyboard.press("ArrowRight")
    expect(slider).to_have_value("7")
    # At once, while a live re-run may still be due or running: the Check waits for the running
    # one and checks the value shown; it is neither dropped nor interrupted by a re-run.
    cell.get_by_role("button", name="Check").click()
    expect(cell.locator(".cell-status")).to_have_text("✓ Solved", timeout=30_000)


def test_a_bad_value_is_refused_with_a_clear_message(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/{STEP}")
    # As if a stale or tampered save: out of range, and code where a value belongs.
    page.evaluate(f"localStorage.setItem('{KEY}', JSON.stringify({{temperature: 7}}))")
    page.reload()
    wait_ready(page)
    run(page, "temp")
    error = page.locator("#cell-temp .cell-output")
    expect(error).to_contain_text("refused the value 7")
    expect(error).to_contain_text("between 0.0 and 2.0")
    expect(temperature(page)).to_have_value("1")  # back at its default, and saved so
    assert page.evaluate(f"localStorage.getItem('{KEY}')") is None
    run(page, "temp")
    expect(stdout(page, "temp")).to_have_text("T=1.00 model=small\n")

    code = "__import__('os').system('echo hi')"
    refused = page.evaluate(
        """async (code) => window.promptdojoKernel.run("print(1)",
            { key: "knobs:x", cellId: "x", controls: { temperature: { code } } })""",
        code,
    )
    assert refused["error_type"] == "ControlError"
    assert "a control's value is true/false, a number, or a short text" in refused["error_message"]


def test_a_removed_or_renamed_control_is_dropped_without_an_error(
    page: Page, server: Server
) -> None:
    page.goto(f"{server.url}/lessons/{STEP}")
    saved = {"temperature": 0.5, "temp": 0.7, "gone": "x"}  # one kept, two the author renamed
    page.evaluate("([k, v]) => localStorage.setItem(k, JSON.stringify(v))", [KEY, saved])
    page.reload()
    wait_ready(page)
    expect(temperature(page)).to_have_value("0.5")
    run(page, "temp")
    expect(stdout(page, "temp")).to_have_text("T=0.50 model=small\n")
    expect(page.locator("#cell-temp .cell-status")).to_contain_text("Done in")
    assert json.loads(page.evaluate(f"localStorage.getItem('{KEY}')")) == {"temperature": 0.5}


def test_a_choice_of_numbers_and_a_slider_through_a_list_return_numbers(
    page: Page, server: Server
) -> None:
    page.goto(f"{server.url}/lessons/knobs/2")
    wait_ready(page)
    cell = page.locator("#cell-lists")
    expect(cell.locator(".recorded")).to_contain_text("int 8 int 4")
    cell.get_by_label("bits").select_option("16")
    expect(stdout(page, "lists")).to_have_text("int 16 int 4\n")
    group = cell.get_by_label("group size", exact=True)
    expect(group).to_have_attribute("type", "range")
    group.focus()
    page.keyboard.press("ArrowRight")
    expect(stdout(page, "lists")).to_have_text("int 16 int 8\n")
    expect(cell.locator("output.control-value").nth(1)).to_have_text("8")
    page.keyboard.press("End")
    expect(stdout(page, "lists")).to_have_text("int 16 int 32\n")
    page.reload()  # the values are saved as numbers and drawn again
    wait_ready(page)
    expect(cell.get_by_label("bits")).to_have_value("2")
    expect(cell.locator("output.control-value").nth(1)).to_have_text("32")
