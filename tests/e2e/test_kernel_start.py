"""The kernel worker starts from the step page's inline script, before the page has loaded.

On an isolated page the inline script (``templates/_isolation.js``) starts the worker while the
rest of the page still parses; ``start.js`` adopts it when it runs (``kernel-client.js``) and
replays whatever the worker said before that. Restarts start a new worker the usual way.
"""

from __future__ import annotations

import time

from playwright.sync_api import Page, Route, expect

from tests.e2e.conftest import READY, Server, run_code, wait_ready
from tests.support.shaping_proxy import ShapingProxy

PHASES = "window.promptdojoKernel.phases.map(([phase]) => phase)"


def test_the_inline_script_starts_the_worker_and_start_js_adopts_it(
    page: Page, server: Server
) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    assert page.evaluate("window.promptdojoKernel.startedEarly") is True
    assert page.evaluate("window.promptdojoEarlyKernel") is None  # taken once
    assert page.evaluate(READY)["restored"] is True
    assert run_code(page, "print(6 * 7)") == "42\n"


def test_what_the_worker_said_before_start_js_ran_is_not_lost(page: Page, server: Server) -> None:
    """start.js arrives late: the early worker's boot phases reach the client all the same."""

    def late(route: Route) -> None:
        time.sleep(3)  # the worker, started without start.js, is booting meanwhile
        route.continue_()

    page.route("**/assets/start-*.js", late)
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    phases = page.evaluate(PHASES)
    assert phases[0] == "downloading", phases
    assert [p for p in phases if p in {"starting", "python-ready", "ready"}][-3:] == [
        "starting",
        "python-ready",
        "ready",
    ], phases
    assert page.evaluate("window.promptdojoKernel.startedEarly") is True
    expect(page.locator(".kernel-status")).to_have_text("Python: ready")
    # Phases are marked when they reached the page, not when start.js got round to them.
    marks = page.evaluate(
        "Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime]))"
    )
    assert marks["pd:worker-start"] < marks["pd:phase-downloading"] < marks["pd:boot-start"], marks


def test_a_restart_starts_a_new_worker_of_its_own(page: Page, server: Server) -> None:
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    run_code(page, "x = 1")
    page.get_by_role("button", name="Restart Python").click()
    wait_ready(page)
    assert page.evaluate("window.promptdojoKernel.startedEarly") is False
    assert run_code(page, "print('x' in globals())") == "False\n"


#: The inline script's first message to a worker is held back for a while, as the page's thread
#: holds it in a real visit while it evaluates the page's scripts (a message reaches a worker
#: only once its page's thread is free). When it went is kept (milliseconds since the epoch).
LATE_MESSAGE = """
(() => {
  const post = Worker.prototype.postMessage;
  let queue = null; // the first worker's messages, in order, until they go
  Worker.prototype.postMessage = function (...args) {
    if (queue === "sent") return post.apply(this, args);
    if (queue) return queue.push(args);
    queue = [args];
    setTimeout(() => {
      window.promptdojoMessageSent = performance.timeOrigin + performance.now();
      for (const held of queue) post.apply(this, held);
      queue = "sent";
    }, %d);
  };
})();
"""


def test_the_worker_starts_its_downloads_before_its_boot_message_arrives(
    page: Page, server: Server
) -> None:
    """The boot message rides in the worker's name: the worker boots without waiting for it."""
    with ShapingProxy(server.url, rate_mbit=None, latency_ms=0) as proxy:
        page.add_init_script(LATE_MESSAGE % 4000)
        page.goto(f"{proxy.url}/lessons/hello/1")
        wait_ready(page)
        page.wait_for_function("() => window.promptdojoMessageSent")
        sent = page.evaluate("window.promptdojoMessageSent") / 1000
        asked = {e.path.rsplit("/", 1)[-1]: e.started for e in proxy.exchanges()}
    assert asked["pyodide.asm.wasm"] < sent, (asked, sent)
    assert page.evaluate("window.promptdojoKernel.startedEarly") is True
    # The interrupt buffer came with the message: Stop interrupts the running cell.
    assert run_code(page, "print(6 * 7)") == "42\n"
    stopped = page.evaluate(
        """async () => {
          const kernel = window.promptdojoKernel;
          const done = kernel.run("while True: pass", { key: "spin", cellId: "spin" });
          await new Promise((resolve) => setTimeout(resolve, 300));
          Atomics.store(kernel.interrupt, 0, 2); // SIGINT, as Stop writes it
          return (await done).error_type;
        }"""
    )
    assert stopped == "KeyboardInterrupt"


def test_a_worker_that_never_speaks_is_replaced_and_the_waiting_run_goes_to_the_new_one(
    page: Page, server: Server
) -> None:
    """Firefox now and then leaves the early worker without its requests or its messages: the
    client replaces a worker that says nothing once its script has arrived (kernel-client.js,
    SILENT_AFTER_SCRIPT_MS), and a run asked for meanwhile runs on the new one. Here the first
    worker's script is one that says nothing."""
    served = []

    def first_says_nothing(route: Route) -> None:
        served.append(route.request.url)
        if len(served) == 1:
            route.fulfill(response=route.fetch(), body="// says nothing\n")
        else:
            route.continue_()

    page.route("**/assets/worker-*.js", first_says_nothing)
    warnings: list[str] = []
    page.on("console", lambda message: warnings.append(message.text))
    page.goto(f"{server.url}/lessons/hello/1")
    output = page.evaluate(
        """new Promise((resolve) => {
          const go = () => {
            let out = "";
            window.promptdojoKernel
              .run("print(6 * 7)", { onStream: (name, text) => (out += text) })
              .then(() => resolve(out));
          };
          if (window.promptdojoKernel) go();
          else window.addEventListener("promptdojo:kernel", go, { once: true });
        })"""
    )
    assert output == "42\n"
    assert len(served) == 2, served
    assert page.evaluate("window.promptdojoKernel.startedEarly") is False
    assert any("says nothing" in text for text in warnings), warnings
    wait_ready(page)


def test_a_run_asked_of_a_python_that_fails_to_restart_ends_saying_why(
    page: Page, server: Server
) -> None:
    """Restart Python while the worker's script cannot be fetched (the link went down): the new
    worker fails, and a Run asked for meanwhile ends with the reason instead of waiting for ever,
    as does one asked for afterwards. Restarting once the script is back gives a working kernel."""
    page.goto(f"{server.url}/lessons/hello/1")
    wait_ready(page)
    restart = page.get_by_role("button", name="Restart Python")
    first, second = page.locator(".cell").nth(0), page.locator(".cell").nth(1)
    held: list[Route] = []
    page.route("**/assets/worker-*.js", lambda route: held.append(route))
    restart.click()
    first.get_by_role("button", name="Run", exact=True).click()  # waits for the new worker
    expect(first.locator(".cell-status")).to_have_text("Running…")
    for route in held:
        route.fulfill(status=404, body="gone")
    page.unroute("**/assets/worker-*.js")
    page.route("**/assets/worker-*.js", lambda route: route.fulfill(status=404, body="gone"))
    expect(page.locator(".kernel-status")).to_have_attribute("data-phase", "error")
    expect(first.locator(".cell-status")).to_have_text("Failed (KernelNotStarted)")
    expect(first.locator(".cell-output")).to_contain_text("Python did not start")
    second.get_by_role("button", name="Run", exact=True).click()
    expect(second.locator(".cell-status")).to_have_text("Failed (KernelNotStarted)")
    page.unroute("**/assets/worker-*.js")
    restart.click()
    wait_ready(page)
    first.get_by_role("button", name="Run", exact=True).click()
    expect(first.locator(".cell-output")).to_contain_text("platform: emscripten", timeout=30_000)
