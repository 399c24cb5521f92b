"""The three browser engines a learner may bring, behind one small interface for the
cross-engine walk (tests/e2e/test_engines.py) and the per-engine benchmark (bench/engines.py).

- Chromium: Debian's, through Playwright (as the rest of the suite).
- Firefox: Debian's ``firefox-esr``, through npm's puppeteer-core over WebDriver BiDi
  (``firefox_driver.mjs`` beside this file, one JSON command a line).
- WebKit: Debian's WebKitGTK (``webkit2gtk-driver``), through Selenium's WebKitGTK driver, its
  MiniBrowser under Xvfb. As shipped it gives an isolated page no ``SharedArrayBuffer``;
  JavaScriptCore's ``useSharedArrayBuffer`` option (the ``JSC_useSharedArrayBuffer`` variable)
  turns it on, so the walk runs both ways.

An engine opens pages (``goto``, ``reload``) and evaluates JavaScript expressions in them
(``evaluate``; a promise is awaited); the walk does everything else in the page itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("PROMPTDOJO_CHROMIUM", "/usr/bin/chromium"))
FIREFOX = Path(os.environ.get("PROMPTDOJO_FIREFOX", "/usr/bin/firefox-esr"))
WEBKIT_DRIVER = Path(os.environ.get("PROMPTDOJO_WEBKIT_DRIVER", "/usr/bin/WebKitWebDriver"))
#: WebKitGTK's MiniBrowser (Debian's libwebkit2gtk, a dependency of webkit2gtk-driver).
MINIBROWSER = next(
    iter(sorted(Path("/usr/lib").glob("*/webkit2gtk-4.*/MiniBrowser"))),
    Path("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"),
)
XVFB = Path("/usr/bin/Xvfb")
FIREFOX_DRIVER = Path(__file__).with_name("firefox_driver.mjs")
#: Seconds any one driver command (open, reload, evaluate) may take on a busy machine.
COMMAND_TIMEOUT_S = 60
#: Seconds a condition of :func:`wait_for` may stay false (a cold boot on a busy machine).
WAIT_TIMEOUT_S = 120
#: Console messages a timed-out wait reports, the last ones.
CONSOLE_LINES = 40

#: Every engine the walk runs in, and what it needs from Debian (`.ci/run` installs them).
ENGINES = {
    "chromium": "chromium",
    "firefox": "firefox-esr",
    "webkit": "webkit2gtk-driver and xvfb",
    "webkit-no-sab": "webkit2gtk-driver and xvfb",
}


class CommandTimeout(TimeoutError):
    """A driver command that did not answer in time; the message names the walk step."""


class Engine(Protocol):
    """One browser with one page open. ``step`` names the walk step for error messages."""

    name: str
    step: str
    page_timeout_s: float

    def goto(self, url: str) -> None: ...
    def reload(self) -> None: ...
    def evaluate(self, expression: str) -> Any: ...
    def close(self) -> None: ...


def missing(name: str) -> str | None:
    """What engine ``name`` lacks on this machine, or None."""
    needed = {
        "chromium": [CHROMIUM],
        "firefox": [FIREFOX, ROOT / "node_modules" / "puppeteer-core"],
        "webkit": [WEBKIT_DRIVER, MINIBROWSER, XVFB],
    }[name.removesuffix("-no-sab")]
    absent = [str(path) for path in needed if not path.exists()]
    if not absent:
        return None
    return f"{', '.join(absent)} not found: install Debian's {ENGINES[name]} (and `npm ci`)"


def guarded(expression: str, timeout_s: float = COMMAND_TIMEOUT_S) -> str:
    """``expression`` for the page: its promise raced against a timer, a node made ``true``.

    Drivers differ on what a DOM node comes back as (puppeteer over BiDi gives ``{}``, which
    reads as false); the walk's conditions only ask whether one exists.
    """
    ms = int(timeout_s * 1000)
    return (
        f"Promise.race([Promise.resolve(({expression})), new Promise((_, no) => setTimeout("
        f"() => no(new Error('the page gave no answer within {timeout_s:g} s')), {ms}))])"
        ".then((v) => (v instanceof Node ? true : v))"
    )


class _Steps:
    """The walk step an engine is in, for the messages of commands that time out."""

    name: str
    step = "start"
    #: Seconds the page may take to answer one evaluation (:func:`guarded`).
    page_timeout_s: float = COMMAND_TIMEOUT_S
    _broken: str | None = None

    def _timeout(self, what: str, timeout_s: float) -> CommandTimeout:
        self._broken = f"{what} timed out in step {self.step!r}"
        return CommandTimeout(
            f"{self.name}, walk step {self.step!r}: {what} gave no answer within {timeout_s:g} s"
        )

    def _page_timeout(self, error: Exception, what: str) -> Exception:
        """The error to raise for ``error`` from the page: a timeout of :func:`guarded` named."""
        if "gave no answer within" in str(error):
            return CommandTimeout(
                f"{self.name}, walk step {self.step!r}: {what}: the page gave no answer"
                f" within {self.page_timeout_s:g} s"
            )
        return error

    def _check(self) -> None:
        if self._broken:
            raise RuntimeError(f"{self.name}: the browser was closed after {self._broken}")


class ChromiumEngine(_Steps):
    """Debian's Chromium through Playwright, service workers allowed.

    Playwright's sync API answers on its own thread only: navigation has its own timeout, an
    evaluation races a timer in the page (:func:`guarded`).
    """

    def __init__(self, browser: Any = None) -> None:
        """``browser``: a Playwright browser already running (the test session's: Playwright's
        sync API cannot start twice in one thread); without it, one of its own."""
        from playwright.sync_api import sync_playwright

        from tests.e2e.conftest import CHROMIUM_ARGS

        self.name = "chromium"
        self._playwright = None if browser is not None else sync_playwright().start()
        self._browser = browser or self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        self._context = self._browser.new_context()
        self._page = self._context.new_page()
        self._page.set_default_timeout(COMMAND_TIMEOUT_S * 1000)
        self._said: deque[str] = deque(maxlen=CONSOLE_LINES)
        self._page.on("console", lambda m: self._said.append(f"{m.type}: {m.text}"))
        self.version = self._browser.version

    def console(self) -> list[str]:
        """The last console messages of the page and its workers."""
        return list(self._said)

    def _navigate(self, what: str, call: Callable[[], Any]) -> None:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            call()
        except PlaywrightTimeout:
            raise self._timeout(what, COMMAND_TIMEOUT_S) from None

    def goto(self, url: str) -> None:
        self._navigate(
            f"opening {url}", lambda: self._page.goto(url, wait_until="domcontentloaded")
        )

    def reload(self) -> None:
        self._navigate("reload", lambda: self._page.reload(wait_until="domcontentloaded"))

    def evaluate(self, expression: str) -> Any:
        try:
            return self._page.evaluate(guarded(expression, self.page_timeout_s))
        except Exception as error:
            raise self._page_timeout(error, f"evaluating {expression[:80]!r}") from error

    def close(self) -> None:
        self._context.close()
        if self._playwright is not None:  # its own browser
            self._browser.close()
            self._playwright.stop()


class FirefoxEngine(_Steps):
    """Debian's Firefox ESR through puppeteer-core (WebDriver BiDi), in a Node process.

    Its answers are read on a thread of their own, so a command waits for one at most
    :data:`COMMAND_TIMEOUT_S`; one that never comes ends the driver and Firefox.
    """

    def __init__(self) -> None:
        self.name = "firefox"
        self._node = subprocess.Popen(
            [
                *("node", str(FIREFOX_DRIVER), str(FIREFOX)),
                *(str(COMMAND_TIMEOUT_S + 5), str(CONSOLE_LINES)),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            start_new_session=True,  # Firefox runs in its group: close() can end both
        )
        self._answers: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.version = self._answer("starting Firefox")["version"]

    def _read(self) -> None:
        for line in self._node.stdout:  # type: ignore[union-attr]
            self._answers.put(line)
        self._answers.put("")

    def _answer(self, what: str) -> dict:
        try:
            line = self._answers.get(timeout=COMMAND_TIMEOUT_S + 10)
        except queue.Empty:
            self._kill()
            raise self._timeout(what, COMMAND_TIMEOUT_S + 10) from None
        if not line:
            raise RuntimeError(f"the Firefox driver exited ({self._node.wait()})")
        answer = json.loads(line)
        if not answer["ok"]:
            error = RuntimeError(f"{self.name}, walk step {self.step!r}: {what}: {answer['error']}")
            raise self._page_timeout(error, what)
        return answer

    def _send(self, what: str, **command: Any) -> Any:
        self._check()
        self._node.stdin.write(json.dumps(command) + "\n")  # type: ignore[union-attr]
        self._node.stdin.flush()  # type: ignore[union-attr]
        return self._answer(what)["value"]

    def console(self) -> list[str]:
        """The last console messages of the page and its workers (the driver keeps them)."""
        return self._send("reading the console", cmd="console")

    def goto(self, url: str) -> None:
        self._send(f"opening {url}", cmd="goto", url=url)

    def reload(self) -> None:
        self._send("reload", cmd="reload")

    def evaluate(self, expression: str) -> Any:
        return self._send(
            f"evaluating {expression[:80]!r}",
            cmd="eval",
            expression=guarded(expression, self.page_timeout_s),
        )

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._node.pid, signal.SIGKILL)
        self._node.wait()

    def close(self) -> None:
        if self._broken:
            return
        try:
            self._node.stdin.close()  # type: ignore[union-attr]  # the driver closes Firefox
            self._node.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self._kill()


def _start_xvfb() -> tuple[subprocess.Popen[bytes], str]:
    """An Xvfb on a free display number (it picks one and writes it to the pipe)."""
    read, write = os.pipe()
    process = subprocess.Popen(
        [str(XVFB), "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    if not number:
        process.kill()
        raise RuntimeError("Xvfb did not start")
    return process, f":{number}"


class WebKitEngine(_Steps):
    """Debian's WebKitGTK MiniBrowser through Selenium and WebKitWebDriver, under Xvfb.

    Selenium's HTTP calls wait without a limit: each runs on a worker thread, waited for at most
    :data:`COMMAND_TIMEOUT_S`; one that never answers ends the driver.
    """

    def __init__(self, *, shared_memory: bool) -> None:
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self.name = "webkit" if shared_memory else "webkit-no-sab"
        self._xvfb, display = _start_xvfb()
        self._home = tempfile.mkdtemp(prefix="promptdojo-webkit-")
        self._calls = ThreadPoolExecutor(max_workers=1)
        env = {**os.environ, "DISPLAY": display, "HOME": self._home}
        # Chromium and Firefox run headless here; MiniBrowser draws into Xvfb, and its GL
        # compositing goes through Mesa's software renderer, 1.4-2.1 s of CPU per boot taken
        # from the page on 2 cores (a Mac composites on its GPU). Without compositing WebKit
        # still lays out and paints, in software, as the headless engines here do.
        env["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"
        env.pop("JSC_useSharedArrayBuffer", None)
        if shared_memory:
            env["JSC_useSharedArrayBuffer"] = "1"
        options = Options()
        options.binary_location = str(MINIBROWSER)
        options.add_argument("--automation")
        self._service = Service(executable_path=str(WEBKIT_DRIVER), env=env)
        try:
            self._driver = self._timed(
                "starting WebKit",
                lambda: webdriver.WebKitGTK(options=options, service=self._service),
            )
        except Exception:
            self._end()
            raise
        self._driver.set_script_timeout(COMMAND_TIMEOUT_S + 5)
        self._driver.set_page_load_timeout(COMMAND_TIMEOUT_S)
        self.version = self._driver.capabilities.get("browserVersion", "?")

    def _timed(self, what: str, call: Callable[[], T]) -> T:
        self._check()
        future = self._calls.submit(call)
        try:
            return future.result(timeout=COMMAND_TIMEOUT_S + 10)
        except FutureTimeout:
            self._end()
            raise self._timeout(what, COMMAND_TIMEOUT_S + 10) from None

    def goto(self, url: str) -> None:
        self._timed(f"opening {url}", lambda: self._driver.get(url))

    def reload(self) -> None:
        self._timed("reload", self._driver.refresh)

    def evaluate(self, expression: str) -> Any:
        script = f"return {guarded(expression, self.page_timeout_s)};"
        what = f"evaluating {expression[:80]!r}"
        try:
            return self._timed(what, lambda: self._driver.execute_script(script))
        except CommandTimeout:
            raise
        except Exception as error:
            raise self._page_timeout(error, what) from error

    def _end(self) -> None:
        """End the driver's processes without asking it (it may not answer)."""
        process = getattr(self._service, "process", None)
        if process and process.poll() is None:
            process.kill()
        self._xvfb.kill()
        self._calls.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(self._home, ignore_errors=True)

    def close(self) -> None:
        if self._broken:
            return
        try:
            self._timed("closing WebKit", self._driver.quit)
        finally:
            self._xvfb.terminate()
            self._xvfb.wait(timeout=10)
            self._calls.shutdown(wait=False)
            shutil.rmtree(self._home, ignore_errors=True)


def launch(name: str, chromium: Any = None) -> Engine:
    """Start engine ``name`` (one of :data:`ENGINES`); ``chromium``, a running Playwright
    Chromium to open the Chromium engine's pages in."""
    if name == "chromium":
        return ChromiumEngine(chromium)
    if name == "firefox":
        return FirefoxEngine()
    return WebKitEngine(shared_memory=name == "webkit")


def wait_for(engine: Engine, condition: str, timeout_s: float = WAIT_TIMEOUT_S) -> Any:
    """Poll the JavaScript ``condition`` until it is truthy; return its value."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = engine.evaluate(condition)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{engine.name}, walk step {engine.step!r}: still false after {timeout_s:g} s:"
                f" {condition}; the page: {page_state(engine)}"
            )
        time.sleep(0.1)


# What a timed-out wait reports of the page: where it is, whether it is isolated and controlled,
# and what the kernel's status line and boot phases say.
PAGE_STATE = """(() => ({
  url: location.href,
  isolated: self.crossOriginIsolated,
  controlled: Boolean(navigator.serviceWorker?.controller),
  status: document.querySelector('.kernel-status')?.textContent?.trim() ?? null,
  earlyWorker: window.promptdojoEarlyKernel === undefined ? 'none' :
    window.promptdojoEarlyKernel === null ? 'adopted or not started' :
    `not adopted, ${window.promptdojoEarlyKernel.events.length} events`,
  startedEarly: window.promptdojoKernel?.startedEarly ?? null,
  phases: (window.promptdojoKernel?.phases ?? []).map(([phase, detail]) =>
    detail?.message ? `${phase}: ${detail.message}` : phase),
}))()"""


def page_state(engine: Engine) -> str:
    """The page's state as :data:`PAGE_STATE` says it, or why it could not be read; and the last
    console messages of the page and its workers, where the engine's driver hears them."""
    try:
        state = json.dumps(engine.evaluate(PAGE_STATE))
    except Exception as error:  # a page that no longer answers says why
        return f"(unreadable: {error})"
    console = getattr(engine, "console", None)
    if console is None:
        return state
    try:
        return f"{state}; the console: {json.dumps(console())}"
    except Exception as error:
        return f"{state}; the console: (unreadable: {error})"
