"""Rich values are shown but cannot run code in the page; input() says what to do instead."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.conftest import Server, run, wait_ready


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
