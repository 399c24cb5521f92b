"""Stop, time limits, and a restart that replays what had run."""

from __future__ import annotations

from playwright.sync_api import Page, Route, expect

from tests.e2e.conftest import Server, click_run, wait_ready

#: The kernel worker's script (hashed name): holding it back holds a new worker's boot.
WORKER_SCRIPT = "**/assets/worker-*.js"


def test_stop_interrupts_an_endless_loop(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/1")
    wait_ready(page)
    spin = click_run(page, "spin")
    expect(spin.locator(".cell-status")).to_have_text("Running…")
    page.wait_for_timeout(300)
    spin.get_by_role("button", name="Stop").click()
    # As the other Stop tests: a starved worker (both cores busy) may take seconds to answer.
    expect(spin.locator(".cell-status")).to_have_text("Stopped: you pressed Stop", timeout=20_000)
    expect(spin.locator(".cell-output")).to_contain_text("KeyboardInterrupt")
    assert "line 2" in spin.locator(".cell-output").inner_text()


def test_the_keyboard_shortcut_stops_too(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/1")
    wait_ready(page)
    spin = page.locator("#cell-spin")
    spin.locator(".cm-content").click()
    page.keyboard.press("Control+Enter")
    expect(spin.locator(".cell-status")).to_have_text("Running…")
    page.keyboard.press("Control+.")
    # As the other Stop tests: a starved worker (both cores busy) may take seconds to answer.
    expect(spin.locator(".cell-status")).to_have_text("Stopped: you pressed Stop", timeout=20_000)


def test_time_limit_stops_a_sleep_and_state_survives(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/1")
    wait_ready(page)
    click_run(page, "state")
    expect(page.locator("#cell-state .cell-status")).to_contain_text("Done")
    nap = click_run(page, "nap")
    # Stopped by its 2 s limit: by the interrupt, or by a restart that replays `a = 41`.
    expect(nap.locator(".cell-status")).to_contain_text("time limit of 2 s", timeout=20_000)
    after = click_run(page, "after")
    expect(after.locator(".cell-output")).to_have_text("42", timeout=60_000)


def test_output_is_capped_with_a_visible_marker(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/2")
    wait_ready(page)
    chatty = click_run(page, "chatty")
    expect(chatty.locator(".cell-status")).to_contain_text("Done", timeout=30_000)
    marker = chatty.locator(".cell-output .truncated")
    expect(marker).to_have_text("Output truncated: a cell shows at most 100,000 characters.")
    shown = chatty.locator(".cell-output pre.stdout").inner_text()
    assert len(shown) <= 100_000
    assert shown.startswith("line 0\nline 1\n")


def test_shift_enter_runs_and_moves_to_the_next_cell(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/2")
    wait_ready(page)
    page.locator("#cell-quiet .cm-content").click()
    page.keyboard.press("Shift+Enter")
    expect(page.locator("#cell-quiet .cell-output")).to_have_text("next cell")
    page.locator("#cell-chatty .cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("Shift+Enter")
    focused = page.evaluate("document.activeElement.closest('.cell')?.id")
    assert focused == "cell-quiet"


def test_a_memory_bomb_ends_in_memory_error_and_python_lives_on(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/3")
    wait_ready(page)
    click_run(page, "keep")
    bomb = click_run(page, "bomb")
    expect(bomb.locator(".cell-status")).to_have_text(
        "Raised MemoryError, as expected", timeout=120_000
    )
    expect(bomb.locator(".cell-output")).to_contain_text('File "<cell bomb>", line 3')
    after = click_run(page, "after-bomb")
    expect(after.locator(".cell-output")).to_have_text("'still here'", timeout=30_000)


def test_a_crashed_runtime_is_replaced_and_the_step_replayed(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/3")
    wait_ready(page)
    click_run(page, "keep")
    expect(page.locator("#cell-keep .cell-status")).to_contain_text("Done")
    held: list[Route] = []
    page.route(WORKER_SCRIPT, lambda route: held.append(route))
    crash = click_run(page, "crash")
    expect(crash.locator(".cell-status")).to_have_text(
        "Python was restarted (Python crashed: memory access out of bounds); "
        "replayed 1 earlier cell(s).",
        timeout=30_000,
    )
    # The old worker's "ready" is gone the moment it is replaced, so nobody waits on a stale one:
    # while the new worker's script is held back, the status says so.
    status = page.locator(".kernel-status")
    expect(status).to_have_attribute("data-phase", "restarting")
    expect(status).to_have_text("Python: restarting…")
    for route in held:
        route.continue_()
    page.unroute(WORKER_SCRIPT)
    wait_ready(page)
    after = click_run(page, "after-bomb")
    expect(after.locator(".cell-output")).to_have_text("'still here'", timeout=30_000)


def test_restart_python_gives_a_clean_slate(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/runaway/1")
    wait_ready(page)
    token = page.evaluate("window.promptdojoKernel.worker.__token = 'first'")
    click_run(page, "state")
    expect(page.locator("#cell-state .cell-status")).to_contain_text("Done")
    page.get_by_role("button", name="Restart Python").click()
    expect(page.locator(".kernel-status")).not_to_have_attribute("data-phase", "ready")
    wait_ready(page)
    assert page.evaluate("window.promptdojoKernel.worker.__token") != token
    after = click_run(page, "after")
    # Nothing was replayed: `a` is gone.
    expect(after.locator(".cell-output")).to_contain_text("NameError: name 'a' is not defined")


def test_after_restart_python_the_steps_setup_runs_again(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/3")
    wait_ready(page)
    shout = click_run(page, "shout")
    expect(shout.locator(".cell-output")).to_have_text("HELLO")
    page.get_by_role("button", name="Restart Python").click()
    expect(page.locator(".kernel-status")).not_to_have_attribute("data-phase", "ready")
    wait_ready(page)
    shout.get_by_role("button", name="Run", exact=True).click()
    # The hidden setup cell defined `greeting` again in the fresh Python.
    expect(shout.locator(".cell-status")).to_contain_text("Done", timeout=30_000)
    expect(shout.locator(".cell-output")).to_have_text("HELLO")


def test_a_cell_that_took_the_interrupt_may_wind_down(page: Page, server: Server) -> None:
    # Python takes the interrupt at once, then its `finally` runs for 2.5 s: past the grace period
    # (1.5 s), within the wind-down. The worker lives, and the traceback is the cell's own.
    page.goto(f"{server.url}/lessons/runaway/4")
    wait_ready(page)
    token = page.evaluate("window.promptdojoKernel.worker.__token = 'first'")
    tidy = click_run(page, "tidy")
    expect(tidy.locator(".cell-status")).to_have_text("Running…")
    tidy.get_by_role("button", name="Stop").click()
    expect(tidy.locator(".cell-status")).to_have_text("Stopped: you pressed Stop", timeout=20_000)
    expect(tidy.locator(".cell-output")).to_contain_text("KeyboardInterrupt")
    assert page.evaluate("window.promptdojoKernel.worker.__token") == token


def test_a_cell_that_never_takes_the_interrupt_gets_a_new_python(
    page: Page, server: Server
) -> None:
    # `sum(range(...))` loops in C: the interrupt is never taken, so the worker is replaced after
    # the grace period, without waiting out the wind-down.
    page.goto(f"{server.url}/lessons/runaway/4")
    wait_ready(page)
    token = page.evaluate("window.promptdojoKernel.worker.__token = 'first'")
    stuck = click_run(page, "stuck")
    expect(stuck.locator(".cell-status")).to_have_text("Running…")
    stuck.get_by_role("button", name="Stop").click()
    expect(stuck.locator(".cell-status")).to_have_text(
        "Python was restarted (the cell did not stop after you had pressed Stop); "
        "replayed 0 earlier cell(s).",
        timeout=20_000,
    )
    wait_ready(page)
    assert page.evaluate("window.promptdojoKernel.worker.__token") != token


#: Spin until stopped, then a run queued behind it that a Stop cancels: the page sends the worker
#: a cancel for the queued run (no interrupt: another run holds Python), which reaches the worker
#: after the queued run's own message, both waiting while the spin runs.
QUEUED_BEHIND_A_SPIN = """(async () => {
  const kernel = window.promptdojoKernel;
  const spin = kernel.run("while True:\\n    pass", { key: "queue", cellId: "spin-first" });
  const until = performance.now() + 60_000;
  while (kernel.current === null) {
    if (performance.now() > until) throw new Error("the spin never started");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const out = [];
  const queued = kernel.run("print('the queued run ran')", {
    key: "queue",
    cellId: "queued",
    onStream: (name, text) => out.push(text),
  });
  const cancelled = kernel.stopCell("queued", "you pressed Stop");
  kernel.stopCell("spin-first", "you pressed Stop");
  const [first, second] = await Promise.all([spin, queued]);
  return { cancelled, first: first.error_type, second: second.error_type, out: out.join("") };
})()"""


def test_stop_on_a_queued_run_cancels_it_though_another_run_holds_python(
    page: Page, server: Server
) -> None:
    # A learner who stops a cell waiting behind a running one (the step's set-up, the cells above
    # it, the lesson's warm-up) expects it never to run. The worker once took the queued run's
    # message, and ran it, before it read the cancel that had arrived meanwhile.
    page.goto(f"{server.url}/lessons/runaway/1")
    wait_ready(page)
    done = page.evaluate(QUEUED_BEHIND_A_SPIN)
    assert done == {
        "cancelled": True,
        "first": "KeyboardInterrupt",
        "second": "KeyboardInterrupt",
        "out": "",
    }, done
    # Python lives on, and the next run goes as usual.
    assert (
        page.evaluate(
            "window.promptdojoKernel.run('6 * 7', {key: 'queue', cellId: 'after'})"
            ".then((r) => r.value['text/plain'])"
        )
        == "42"
    )
