"""`pip install <repo>` in a fresh venv; `promptdojo serve` and `check --pyodide` from elsewhere.

This proves the wheel carries templates, the built front end, the Pyodide core, the Node runner
with the boot module it loads, and the pinned lock, and that nothing is read from the checkout at
run time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.e2e.conftest import start_server, stop_server


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, dict(response.headers), response.read()


@pytest.mark.slow
def test_wheel_install_serves_lessons_from_any_directory(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(ROOT)],
        check=True,
        cwd=tmp_path,
    )
    where = subprocess.run(
        [str(python), "-c", "import promptdojo.pyodide.dist as d; print(d.build_dir())"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(venv)), f"assets resolved from {where}, not from the wheel"
    _check_pyodide_from_the_wheel(venv, tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    server = start_server(ROOT / "lessons", elsewhere, python=python)
    try:
        status, _, body = _get(server.url + "/")
        assert status == 200
        assert b"Decoding, the KV cache, and quantization" in body
        status, _, page = _get(server.url + "/lessons/decoding-kv-cache-quantization/1")
        assert status == 200
        text = page.decode()
        assets = re.findall(r'(/assets/[A-Za-z0-9_.-]+\.(?:js|css))"', text)
        assert len(assets) == 3, assets
        worker = re.search(r"&#34;workerUrl&#34;: &#34;([^&]+)&#34;", text)
        assert worker is not None
        for url in [*assets, worker.group(1)]:
            status, headers, _ = _get(server.url + url)
            assert status == 200, url
        status, headers, wasm = _get(server.url + "/assets/pyodide/314.0.7/pyodide.asm.wasm")
        assert headers["content-type"] == "application/wasm"
        assert wasm[:4] == b"\0asm"
    finally:
        stop_server(server)


def _check_pyodide_from_the_wheel(venv: Path, tmp_path: Path) -> None:
    """``check --pyodide`` boots the wheel's own Node runner and boot module, not the checkout's."""
    lesson = tmp_path / "stdlib"
    shutil.copytree(ROOT / "tests" / "fixtures" / "pyodide" / "stdlib", lesson)
    done = subprocess.run(
        [str(venv / "bin" / "promptdojo"), "check", "--pyodide", str(lesson)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "CI": "true"},
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "5 passed, 2 failed" in done.stdout, done.stdout
    assert "Node exited" not in done.stdout
    boot = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "from promptdojo.pyodide import node; print(node.boot_module())",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert boot.startswith(str(venv)), f"boot.js resolved from {boot}, not from the wheel"
