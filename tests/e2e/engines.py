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

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Protocol

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
#: Seconds any one command may take (a cold boot on a busy machine included).
COMMAND_TIMEOUT_S = 180

#: Every engine the walk runs in, and what it needs from Debian (`.ci/run` installs them).
ENGINES = {
    "chromium": "chromium",
    "firefox": "firefox-esr",
    "webkit": "webkit2gtk-driver and xvfb",
    "webkit-no-sab": "webkit2gtk-driver and xvfb",
}


class Engine(Protocol):
    """One browser with one page open."""

    name: str

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


class ChromiumEngine:
    """Debian's Chromium through Playwright, service workers allowed."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        from tests.e2e.conftest import CHROMIUM_ARGS

        self.name = "chromium"
        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        self._page = self._browser.new_context().new_page()
        self._page.set_default_timeout(COMMAND_TIMEOUT_S * 1000)
        self.version = self._browser.version

    def goto(self, url: str) -> None:
        self._page.goto(url, wait_until="domcontentloaded")

    def reload(self) -> None:
        self._page.reload(wait_until="domcontentloaded")

    def evaluate(self, expression: str) -> Any:
        return self._page.evaluate(expression)

    def close(self) -> None:
        self._browser.close()
        self._playwright.stop()


class FirefoxEngine:
    """Debian's Firefox ESR through puppeteer-core (WebDriver BiDi), in a Node process."""

    def __init__(self) -> None:
        self.name = "firefox"
        self._node = subprocess.Popen(
            ["node", str(FIREFOX_DRIVER), str(FIREFOX)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            start_new_session=True,  # Firefox runs in its group: close() can end both
        )
        self.version = self._answer()["version"]

    def _answer(self) -> dict:
        line = self._node.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError(f"the Firefox driver exited ({self._node.wait()})")
        answer = json.loads(line)
        if not answer["ok"]:
            raise RuntimeError(f"Firefox: {answer['error']}")
        return answer

    def _send(self, **command: Any) -> Any:
        self._node.stdin.write(json.dumps(command) + "\n")  # type: ignore[union-attr]
        self._node.stdin.flush()  # type: ignore[union-attr]
        return self._answer()["value"]

    def goto(self, url: str) -> None:
        self._send(cmd="goto", url=url)

    def reload(self) -> None:
        self._send(cmd="reload")

    def evaluate(self, expression: str) -> Any:
        return self._send(cmd="eval", expression=expression)

    def close(self) -> None:
        try:
            self._node.stdin.close()  # type: ignore[union-attr]  # the driver closes Firefox
            self._node.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self._node.pid, signal.SIGKILL)
            self._node.wait()


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


class WebKitEngine:
    """Debian's WebKitGTK MiniBrowser through Selenium and WebKitWebDriver, under Xvfb."""

    def __init__(self, *, shared_memory: bool) -> None:
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self.name = "webkit" if shared_memory else "webkit-no-sab"
        self._xvfb, display = _start_xvfb()
        self._home = tempfile.mkdtemp(prefix="promptdojo-webkit-")
        env = {**os.environ, "DISPLAY": display, "HOME": self._home}
        env.pop("JSC_useSharedArrayBuffer", None)
        if shared_memory:
            env["JSC_useSharedArrayBuffer"] = "1"
        options = Options()
        options.binary_location = str(MINIBROWSER)
        options.add_argument("--automation")
        try:
            self._driver = webdriver.WebKitGTK(
                options=options, service=Service(executable_path=str(WEBKIT_DRIVER), env=env)
            )
        except Exception:
            self._xvfb.kill()
            raise
        self._driver.set_script_timeout(COMMAND_TIMEOUT_S)
        self._driver.set_page_load_timeout(COMMAND_TIMEOUT_S)
        self.version = self._driver.capabilities.get("browserVersion", "?")

    def goto(self, url: str) -> None:
        self._driver.get(url)

    def reload(self) -> None:
        self._driver.refresh()

    def evaluate(self, expression: str) -> Any:
        return self._driver.execute_script(f"return ({expression});")

    def close(self) -> None:
        try:
            self._driver.quit()
        finally:
            self._xvfb.terminate()
            self._xvfb.wait(timeout=10)
            shutil.rmtree(self._home, ignore_errors=True)


def launch(name: str) -> Engine:
    """Start engine ``name`` (one of :data:`ENGINES`)."""
    if name == "chromium":
        return ChromiumEngine()
    if name == "firefox":
        return FirefoxEngine()
    return WebKitEngine(shared_memory=name == "webkit")


def wait_for(engine: Engine, condition: str, timeout_s: float = COMMAND_TIMEOUT_S) -> Any:
    """Poll the JavaScript ``condition`` until it is truthy; return its value."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = engine.evaluate(condition)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{engine.name}: still false after {timeout_s} s: {condition}")
        time.sleep(0.1)
