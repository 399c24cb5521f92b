"""Rich values are shown but cannot run code in the page; input() says what to do instead."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, run, run_code, wait_ready


def test_html_output_renders_but_its_script_and_onerror_never_run(
    page: Page, server: Server
) -> None:
    page.goto(f"{server.url}/lessons/runtime/2")
    wait_ready(page)
    title = page.title()
    run(page, "html")
    frame = page.locator("#cell-html iframe.html-value")
    expect(frame).to_have_attribute("sandbox", "allow-same-origin")
    # The markup is shown...
    expect(frame.content_frame.locator("#rich")).to_have_text("bold claims")
    expect(frame.content_frame.locator("script")).to_have_count(1)
    # ...and neither its <script> nor its onerror handler touched the page.
    page.wait_for_timeout(500)
    assert page.title() == title
    assert "pwned" not in page.title()


def test_input_fails_at_once_with_a_plain_message(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runtime/2")
    wait_ready(page)
    run(page, "ask")
    ask = page.locator("#cell-ask")
    expect(ask.locator(".cell-status")).to_have_text("Raised RuntimeError, as expected")
    expect(ask.locator(".cell-output")).to_contain_text(
        "input() is not supported in lesson cells: a cell cannot stop and wait for typing."
    )
    expect(ask.locator(".cell-output")).to_contain_text("line 1, in <module>")


def test_a_traceback_shows_the_learners_source_lines_and_carets(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/2")
    wait_ready(page)
    run(page, "cell-1")
    output = page.locator("#cell-cell-1 .cell-output")
    expect(output).to_contain_text('File "<cell cell-1>", line 5, in <module>\n    inverse(0)')
    # The function the cell defined shows its line too, with carets under the division.
    expect(output).to_contain_text(
        'File "<cell cell-1>", line 2, in inverse\n    return 1 / x\n           ~~^~~'
    )


def test_a_python_warning_reaches_stderr_once_per_location(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    code = 'import warnings\nwarnings.warn("the logits overflowed", RuntimeWarning)\n'
    first = run_code(page, code)
    assert first == (
        "<cell t>:2: RuntimeWarning: the logits overflowed\n"
        '  warnings.warn("the logits overflowed", RuntimeWarning)\n'
    )
    assert run_code(page, code) == "", "once per location, as in CPython"
