"""On a terminal the check shows a progress bar; in CI or a pipe, plain lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptdojo.checking import console
from tests.conftest import ROOT

STDLIB = ROOT / "tests" / "fixtures" / "pyodide" / "stdlib"


def test_a_terminal_gets_a_progress_bar(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(console, "interactive", lambda: True)
    code = console.run_check([STDLIB], jobs=2)
    out = capsys.readouterr().out
    assert code == 1
    assert "checking cells" in out
    assert f"✓ {STDLIB / '01-passes.md'}" in out
    assert f"✗ {STDLIB / '02-fails.md'}" in out
    assert "PASSED " not in out, "no per-cell lines when there is a bar"
    assert out.rstrip().splitlines()[-1].startswith("5 passed, 2 failed, 0 skipped in ")


def test_ci_or_a_pipe_gets_plain_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CI", "true")
    assert console.interactive() is False
    console.run_check([STDLIB], jobs=2)
    out = capsys.readouterr().out
    assert f"PASSED {STDLIB}/01-passes.md::1::cell-1 (" in out
    assert "checking cells" not in out


def test_a_narrow_terminal_never_breaks_a_file_path(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(console, "interactive", lambda: True)
    monkeypatch.setenv("COLUMNS", "24")
    console.run_check([STDLIB], jobs=2)
    out = capsys.readouterr().out
    assert f"✗ {STDLIB / '02-fails.md'} (" in out
