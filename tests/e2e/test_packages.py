"""Packages reach the browser through the server's pull-through cache, or fail plainly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import Page, expect

from promptdojo.pyodide.dist import build_dir
from promptdojo.pyodide.release import COMMON_FILES
from tests.e2e.conftest import Server, run, start_server, stop_server, wait_ready
from tests.support.upstream import PACKAGES, Upstream


def release_with_test_packages(folder: Path) -> Path:
    """An "unpacked Pyodide release": the built core plus a lock that also names our wheels."""
    core = next((build_dir() / "pyodide").iterdir())
    release = folder / "pyodide"
    release.mkdir()
    for name in (*COMMON_FILES, "pyodide.asm.mjs"):
        if name != "pyodide-lock.json":
            shutil.copyfile(core / name, release / name)
    lock = json.loads((core / "pyodide-lock.json").read_text())
    lock["packages"].update({n: PACKAGES[n] for n in ("tinypkg", "tinydep")})
    (release / "pyodide-lock.json").write_text(json.dumps(lock))
    return release


def lesson_needing_tinypkg(folder: Path) -> Path:
    lesson = folder / "lessons" / "tiny"
    lesson.mkdir(parents=True)
    (lesson / "lesson.yaml").write_text(
        'id: tiny\ntitle: A package from upstream\nchapter: "ch 0"\npackages: [tinypkg]\n'
    )
    (lesson / "01-use.md").write_text(
        "---\ntitle: Use it\n---\n\n```python {#use}\nimport tinypkg\nimport tinydep\n\n"
        "(tinypkg.NAME, tinydep.NAME)\n```\n"
    )
    return lesson.parent


def test_the_first_page_fetches_a_package_once_and_later_pages_use_the_cache(
    page: Page, upstream: Upstream, tmp_path: Path
) -> None:
    release = release_with_test_packages(tmp_path)
    cache = tmp_path / "cache"
    server = start_server(
        lesson_needing_tinypkg(tmp_path),
        tmp_path,
        "--pyodide-dir",
        str(release),
        "--package-cache",
        str(cache),
        "--package-upstream",
        upstream.url,
    )
    try:
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        # Keep every text the status line shows during the boot (an init script is not subject
        # to the page's CSP).
        page.add_init_script(
            """window.__status = [];
            new MutationObserver(() => {
              const text = document.querySelector('.kernel-status')?.textContent;
              if (text && text !== window.__status.at(-1)) window.__status.push(text);
            }).observe(document, { subtree: true, childList: true, characterData: true });"""
        )
        page.goto(f"{server.url}/lessons/tiny/1")
        wait_ready(page)
        expect(page.locator(".kernel-status")).to_have_text("Python: ready")
        run(page, "use")
        expect(page.locator("#cell-use .cell-output")).to_have_text("('tinypkg', 'tinydep')")
        phases = page.evaluate("window.promptdojoKernel.phases")
        # Requested through loadPyodide's `packages`: loaded by the time Python itself is up.
        python_ready = next(detail for name, detail in phases if name == "python-ready")
        assert python_ready["preloaded"] == ["tinypkg"]
        # The boot showed how much it downloaded.
        downloaded = [detail["bytes"] for name, detail in phases if name == "progress"]
        assert max(downloaded) > 5_000_000
        shown = page.evaluate("window.__status")
        assert "Python: starting and loading tinypkg…" in [t.split(" (")[0] for t in shown]
        assert any(t.endswith(" MB downloaded)") for t in shown), shown
        assert shown[-1] == "Python: ready"
        # The release folder was served, under its version.
        assert any("/pyodide/314.0.7/pyodide.asm.wasm" in url for url in requests)
        assert sorted(upstream.requests) == [
            "/tinydep-1.0-py3-none-any.whl",
            "/tinypkg-1.0-py3-none-any.whl",
        ]
        assert sorted(p.name for p in cache.iterdir()) == [
            "tinydep-1.0-py3-none-any.whl",
            "tinypkg-1.0-py3-none-any.whl",
        ]
        page.reload()
        wait_ready(page)
        run(page, "use")
        expect(page.locator("#cell-use .cell-output")).to_have_text("('tinypkg', 'tinydep')")
        assert len(upstream.requests) == 2, "the second page came from the server's cache"
        # Now on hand, the wheels (tinydep first: tinypkg depends on it) were unpacked while
        # Python started and installed without Pyodide's loader (wheels.js).
        phases = page.evaluate("window.promptdojoKernel.phases")
        ready = next(detail for name, detail in phases if name == "ready")
        assert ready["fromWheels"] is True, ready
        assert ready["loaded"] == ["tinypkg"]
    finally:
        stop_server(server)


def test_an_unreachable_upstream_still_gives_a_ready_kernel(page: Page, server: Server) -> None:
    """The session server's upstream is a closed port; the page must not hang on numpy."""
    page.goto(f"{server.url}/lessons/needs-numpy/1")
    wait_ready(page)
    expect(page.locator(".kernel-status")).to_contain_text("without numpy")
    cell = page.locator(".cell").first
    cell.get_by_role("button", name="Run", exact=True).click()
    error = cell.locator(".cell-output .error")
    expect(error).to_contain_text(
        "numpy is not available: the server could not provide its Pyodide package", timeout=10_000
    )
    expect(error).to_contain_text("Whoever runs the server can pre-fetch it with")
    expect(error).to_contain_text("`promptdojo pyodide fetch numpy`")
    # The cause, not Pyodide's heading for it.
    expect(error).not_to_contain_text("The following error occurred while loading numpy:")
    expect(error).to_contain_text("package (Failed to fetch)")


def test_a_folder_that_is_not_a_release_is_refused_with_what_it_lacks(tmp_path: Path) -> None:
    (tmp_path / "lessons").mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "promptdojo",
            "serve",
            str(tmp_path / "lessons"),
            "--pyodide-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert f"--pyodide-dir {tmp_path} is not an unpacked Pyodide release: it lacks" in done.stderr
    assert "pyodide.asm.wasm" in done.stderr


def test_a_failed_setup_shows_its_cause_in_the_cell_the_learner_ran(
    page: Page, tmp_path: Path
) -> None:
    """Without numpy, the setup's import fails: the learner sees that, not a bare NameError."""
    lesson = tmp_path / "lessons" / "setup-fails"
    lesson.mkdir(parents=True)
    (lesson / "lesson.yaml").write_text(
        'id: setup-fails\ntitle: Setup fails\nchapter: "ch 0"\npackages: [numpy]\n'
    )
    (lesson / "01-a.md").write_text(
        "---\ntitle: A\n---\n\n```python {.setup}\nimport numpy as np\n\n\n"
        "def compare_distributions(p, q):\n    return np.abs(p - q).sum()\n```\n\n"
        "```python {#first}\ncompare_distributions(1, 2)\n```\n"
    )
    server = start_server(lesson.parent, tmp_path, "--package-upstream", "http://127.0.0.1:9/")
    try:
        page.goto(f"{server.url}/lessons/setup-fails/1")
        wait_ready(page)
        run(page, "first")
        output = page.locator("#cell-first .cell-output")
        setup = output.locator(".setup-error")
        expect(setup).to_contain_text("This step's setup (hidden cell “cell-1”) failed")
        expect(setup).to_contain_text("numpy is not available")
        expect(output.locator(".error").last).to_contain_text("NameError")
    finally:
        stop_server(server)
