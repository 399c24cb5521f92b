"""Output under `check`: each cell keeps what the browser shows, OUTPUT_CAP characters at most."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from promptdojo.checking.judge import StepRunner
from promptdojo.checking.outcome import Status
from promptdojo.course import load_lesson
from promptdojo.kernel import OUTPUT_CAP
from tests.conftest import ROOT

#: A cell that prints 10 MB, half of it to stderr, then shows a value of 1 MB.
CHATTY = (
    "import sys\n"
    "for _ in range(100):\n"
    "    print('x' * 49_999)\n"
    "    print('y' * 49_999, file=sys.stderr)\n"
    "'z' * 1_000_000"
)


def chatty(folder: Path) -> Path:
    folder.mkdir()
    (folder / "lesson.yaml").write_text('id: chatty\ntitle: Chatty\nchapter: "ch 0"\n')
    (folder / "01-chatty.md").write_text(
        f"---\ntitle: Chatty\n---\n\n# Chatty\n\n```python\n{CHATTY}\n```\n"
    )
    return folder


def test_a_cell_keeps_at_most_the_cap_and_says_it_was_cut(tmp_path: Path) -> None:
    lesson = load_lesson(chatty(tmp_path / "chatty"))
    (outcome,) = StepRunner(lesson.steps[0]).run()
    assert outcome.status is Status.PASSED
    output = outcome.output
    assert len(output.stdout) + len(output.stderr) == OUTPUT_CAP
    assert output.stdout == "x" * 49_999 + "\n"
    assert output.stderr == "y" * 49_999 + "\n"
    assert output.truncated == OUTPUT_CAP
    assert len(output.value["text/plain"]) < OUTPUT_CAP + 100
    assert output.value["text/plain"].endswith("… (900,002 more characters)")


def test_record_keeps_the_cap_and_the_page_shows_the_browsers_marker(tmp_path: Path) -> None:
    folder = chatty(tmp_path / "chatty")
    done = subprocess.run(
        [sys.executable, "-m", "promptdojo", "check", str(folder), "--record"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "CI": "true"},
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    record_file = folder / "recorded" / "01-chatty.json"
    assert record_file.stat().st_size < 3 * OUTPUT_CAP
    record = json.loads(record_file.read_text())["cell-1"]
    assert record["truncated"] == OUTPUT_CAP
    from fastapi.testclient import TestClient

    from promptdojo.web.app import create_app
    from promptdojo.web.settings import Settings

    client = TestClient(create_app(Settings(lessons_dir=tmp_path)))
    page = client.get("/lessons/chatty/1", headers={"accept": "text/html"}).text
    assert len(page) < 3 * OUTPUT_CAP
    assert re.search(
        r'<p class="truncated">Output truncated: a cell shows at most 100,000 characters.</p>', page
    )
