"""Each cell's process under `check` has memory, CPU-time and file-size limits (lesson.yaml)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from promptdojo.checking.backends.cpython import run_step_in_process
from promptdojo.checking.outcome import Status
from promptdojo.course import load_lesson
from tests.conftest import ROOT

MEMORY = (
    "try:\n"
    "    block = bytearray(1024**3)\n"
    "    print('allocated')\n"
    "except MemoryError:\n"
    "    print('memory refused')"
)
FILE = (
    "import os, tempfile\n"
    "path = os.path.join(tempfile.mkdtemp(), 'big.bin')\n"
    "try:\n"
    "    with open(path, 'wb') as f:\n"
    "        f.write(b'x' * (3 * 1024 * 1024))\n"
    "    print('written')\n"
    "except OSError as error:\n"
    "    print('file refused', error.errno)\n"
    "finally:\n"
    "    os.remove(path)"
)
CPU = "import time\nstart = time.process_time()\nwhile time.process_time() - start < 4:\n    pass"


def lesson_with(folder: Path, settings: str, *cells: str):
    folder.mkdir()
    (folder / "lesson.yaml").write_text(f'id: limits\ntitle: Limits\nchapter: "ch 0"\n{settings}')
    body = "".join(f"```python\n{code}\n```\n\n" for code in cells)
    (folder / "01-limits.md").write_text(f"---\ntitle: Limits\n---\n\n# Limits\n\n{body}")
    return load_lesson(folder)


def test_memory_file_size_and_cpu_time_are_limited_per_lesson(tmp_path: Path) -> None:
    settings = "time_limit: 30\nmemory_limit_mb: 512\nfile_size_limit_mb: 1\ncpu_limit: 1\n"
    lesson = lesson_with(tmp_path / "limits", settings, MEMORY, FILE, CPU, "print('after')")
    memory, file, cpu, after = run_step_in_process(lesson, lesson.steps[0]).outcomes
    assert memory.output.stdout == "memory refused\n"
    assert file.output.stdout == "file refused 27\n"  # EFBIG
    assert cpu.status is Status.FAILED
    assert cpu.message == "timed out: the cell used more than 1 s of CPU time"
    assert (after.status, after.output.stdout) == (Status.PASSED, "after\n")


def test_the_default_limits_leave_an_ordinary_cell_alone(tmp_path: Path) -> None:
    small = "block = bytearray(64 * 1024**2)\nprint(len(block))"
    lesson = lesson_with(tmp_path / "limits", "", small, CPU.replace("< 4", "< 0.5"))
    outcomes = run_step_in_process(lesson, lesson.steps[0]).outcomes
    assert [o.status for o in outcomes] == [Status.PASSED, Status.PASSED]


HOG = (
    "blocks = []\n"
    "try:\n"
    "    for _ in range(14):\n"
    "        blocks.append(bytearray(256 * 1024**2))\n"
    "    print('allocated 3.5 GB')\n"
    "except MemoryError:\n"
    "    print('memory refused')\n"
    "del blocks"
)


def test_a_pyodide_check_keeps_nodes_memory_to_the_limit(tmp_path: Path) -> None:
    lesson_with(tmp_path / "limits", "time_limit: 60\nmemory_limit_mb: 512\n", HOG, "print(1)")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "promptdojo", "check", "--pyodide", "--no-snapshot"),
            *("--cache", str(tmp_path / "cache"), str(tmp_path / "limits"), "--record"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "CI": "true"},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    record = (tmp_path / "limits" / "recorded" / "01-limits.json").read_text()
    assert '"stdout": "memory refused\\n"' in record
