"""Cells under `check` (and `pytest lessons/`) see an allowlisted environment, not the CI's."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from promptdojo.checking.environment import cell_environment
from tests.conftest import ROOT

pytest_plugins = ["pytester"]

SECRET = "PROMPTDOJO_TEST_SECRET"
#: A cell that prints every variable it sees and whether the secret is one of them.
SHOWS = "import os\nprint(sorted(os.environ))\nprint('secret:', os.environ.get({name!r}))"


def lesson(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "lesson.yaml").write_text('id: env\ntitle: Env\nchapter: "ch 0"\n')
    (folder / "01-env.md").write_text(
        f"---\ntitle: Env\n---\n\n# Env\n\n```python\n{SHOWS.format(name=SECRET)}\n```\n"
    )
    return folder


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "CI": "true", SECRET: "hunter2", "PATH": os.environ["PATH"]},
        timeout=300,
    )


def test_a_ci_secret_stays_out_of_the_cells_and_their_records(tmp_path: Path) -> None:
    folder = lesson(tmp_path / "env")
    done = check(str(folder), "--record")
    assert done.returncode == 0, done.stdout + done.stderr
    record = (folder / "recorded" / "01-env.json").read_text()
    stdout = json.loads(record)["cell-1"]["stdout"]
    assert "secret: None" in stdout
    assert "hunter2" not in record
    seen = ast.literal_eval(stdout.splitlines()[0])  # the cell's sorted(os.environ)
    assert "PATH" in seen
    assert "PYTHONHASHSEED" in seen
    assert set(seen) <= {*cell_environment(source=dict.fromkeys(seen, "")), "PYTHONHASHSEED"}


def test_pass_env_lets_one_variable_through(tmp_path: Path) -> None:
    folder = lesson(tmp_path / "env")
    done = check(str(folder), "--record", "--pass-env", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads((folder / "recorded" / "01-env.json").read_text())
    assert "secret: hunter2" in record["cell-1"]["stdout"]


def test_the_allowlist_keeps_the_locale_and_drops_the_rest() -> None:
    source = {"PATH": "/bin", "LC_ALL": "C.UTF-8", "AWS_SECRET_ACCESS_KEY": "x", "CI_TOKEN": "y"}
    assert cell_environment(source=source) == {"PATH": "/bin", "LC_ALL": "C.UTF-8"}
    assert cell_environment(["CI_TOKEN"], source=source)["CI_TOKEN"] == "y"


def test_pytest_lessons_runs_cells_in_the_same_environment(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lesson(pytester.path / "lessons" / "env")
    step = pytester.path / "lessons" / "env" / "01-env.md"
    step.write_text(
        step.read_text().replace(
            "print('secret:'", f"assert {SECRET!r} not in os.environ, 'leaked'\nprint('secret:'"
        )
    )
    monkeypatch.setenv(SECRET, "hunter2")
    pytester.runpytest_subprocess("lessons").assert_outcomes(passed=1)
    passed = pytester.runpytest_subprocess("lessons", "--pass-env", SECRET)
    passed.assert_outcomes(failed=1)
    assert os.environ[SECRET] == "hunter2"  # this process's own environment is untouched
