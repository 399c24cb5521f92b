"""The Node check's seams, held to one definition each side: the job Python writes and
check.mjs reads (``CheckJob``), what check.mjs writes back (``CheckOutput``), and the ``pd*``
globals the judge's Python and check.mjs's thread call each other through (``CheckGlobals``),
against the typedefs of ``static/js/shared/contract.js``."""

from __future__ import annotations

import re
from pathlib import Path

from promptdojo.checking.backends.pyodide import CheckJob, _base_job, step_job
from promptdojo.course import load_lesson
from promptdojo.pyodide.dist import core_dir
from promptdojo.pyodide.lock import Lock
from tests.conftest import ROOT
from tests.web.test_contract import typedef

NODE = ROOT / "promptdojo" / "pyodide" / "node"
BACKENDS = ROOT / "promptdojo" / "checking" / "backends"


def test_the_job_python_writes_is_the_job_check_mjs_reads(tmp_path: Path) -> None:
    lesson = load_lesson(ROOT / "tests" / "fixtures" / "pyodide" / "stdlib")
    core = core_dir()
    base, _ = _base_job(core, tmp_path, None)
    job = step_job(base, lesson, lesson.steps[0], Lock.read(core), tmp_path)
    assert set(job) == set(CheckJob.__annotations__) == typedef("CheckJob")
    read = set()
    for script in ("check.mjs", "boot_node.mjs"):
        read |= set(re.findall(r"\bjob\.(\w+)", (NODE / script).read_text(encoding="utf-8")))
    assert read
    assert read <= typedef("CheckJob"), read - typedef("CheckJob")
    judge = (BACKENDS / "pyodide_step.py").read_text(encoding="utf-8")
    assert set(re.findall(r'job(?:\["|\.get\(")(\w+)"', judge)) <= typedef("CheckJob")


def test_what_check_mjs_writes_is_what_python_reads() -> None:
    check = (NODE / "check.mjs").read_text(encoding="utf-8")
    written = re.search(r"const result = (\{.*\});", check)
    assert written is not None
    keys = set(re.findall(r"[{,]\s*(\w+):", written.group(1)))
    assert keys == typedef("CheckOutput")
    backend = (BACKENDS / "pyodide.py").read_text(encoding="utf-8")
    read = set(re.findall(r'data(?:\.get\("|\[")(\w+)"', backend))
    assert read
    assert read <= typedef("CheckOutput"), read


def test_the_judge_and_check_mjs_call_the_same_globals() -> None:
    check = (NODE / "check.mjs").read_text(encoding="utf-8")
    judge = (BACKENDS / "pyodide_step.py").read_text(encoding="utf-8")
    defined = set(re.findall(r"globalThis\.(pd\w+) =", check))
    called = set(re.findall(r"\bjs\.(pd\w+)", judge))
    assert defined == called == typedef("CheckGlobals")
