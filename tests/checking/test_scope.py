"""``check --changed REF`` and ``check --shard I/N``: which steps one run takes on."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from promptdojo.checking.scope import (
    ScopeError,
    _library,
    changed_lessons,
    parse_shard,
    scope,
    split,
    write_times,
)
from promptdojo.cli import app
from tests.support.course import make_course

ROOT = Path(__file__).resolve().parent.parent.parent


def test_shards_cover_every_step_once_and_are_deterministic(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    steps = sorted(str(p) for p in lessons.glob("*/0*.md"))
    parts = [scope([lessons], None, f"{i}/3", "cpython") for i in (1, 2, 3)]
    found = sorted(str(p) for part in parts for p in part)
    assert found == steps  # every step once: 3 of hello, 2 of knobs
    assert parts == [scope([lessons], None, f"{i}/3", "cpython") for i in (1, 2, 3)]


def test_shards_balance_the_recorded_times() -> None:
    # A skewed course: a few long steps among many short ones.
    times = {f"l{n:03d}/0{s}-x.md": 1.0 + (n * 7 + s * 3) % 11 for n in range(60) for s in (1, 2)}
    times["l000/01-x.md"] = 40.0
    for shards in (2, 3, 4, 8):
        parts = split(times, times, shards)
        loads = [sum(times[i] for i in part) for part in parts]
        assert sorted(i for part in parts for i in part) == sorted(times)
        assert max(loads) <= 1.2 * sum(loads) / shards, (shards, loads)


def test_a_step_without_a_time_counts_as_the_mean() -> None:
    parts = split(["a", "b", "c", "d"], {"a": 3.0, "b": 1.0}, 2)
    # c and d weigh 2 each (the mean of 3 and 1): a+b and c+d are 4 each.
    assert parts == [["a", "b"], ["c", "d"]]


def test_recorded_times_move_steps_between_shards(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    times = {p.relative_to(lessons).as_posix(): 1.0 for p in lessons.glob("*/0*.md")}
    write_times(lessons, "cpython", {**times, "hello/01-where-am-i.md": 100.0})
    first = scope([lessons], None, "1/2", "cpython")
    assert first == [lessons / "hello" / "01-where-am-i.md"]  # the long step has a shard alone
    kept = json.loads((lessons / "check-times.json").read_text())["cpython"]
    assert kept["hello/01-where-am-i.md"] == 100.0


def test_a_bad_shard_says_what_to_write() -> None:
    for text in ("0/2", "3/2", "2", "a/b"):
        with pytest.raises(ScopeError, match="must be I/N with 1 ≤ I ≤ N"):
            parse_shard(text)


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_changed_takes_the_changed_lessons_or_all_when_the_library_changed(
    tmp_path: Path,
) -> None:
    lessons = make_course(tmp_path)
    library = tmp_path / "library.py"
    library.write_text("x = 1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "start")
    folders = [lessons / "hello", lessons / "knobs"]
    assert changed_lessons(folders, "HEAD", [library]) == []
    step = lessons / "knobs" / "02-next.md"
    step.write_text(step.read_text() + "\nMore prose.\n")
    assert changed_lessons(folders, "HEAD", [library]) == [lessons / "knobs"]
    (lessons / "hello" / "04-new.md").write_text("---\ntitle: New\n---\n")  # untracked counts
    assert changed_lessons(folders, "HEAD", [library]) == folders
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "more")
    library.write_text("x = 2\n")
    assert changed_lessons(folders, "HEAD", [library]) == folders


def test_the_library_holds_the_boot_module_and_every_module_it_imports() -> None:
    """A change to the page's boot, or to what it imports, runs every lesson: the paths are the
    source tree's, so moving a file must move them too."""
    library = [path.resolve() for path in _library()]
    boot = ROOT / "static" / "js" / "kernel" / "boot.js"
    assert boot.is_file()
    imported = re.findall(r'from "(\.{1,2}/[^"]+)"', boot.read_text())
    assert imported, "boot.js imports nothing relative: the test reads its imports wrongly"
    for path in [boot, *((boot.parent / name).resolve() for name in imported)]:
        assert path.is_file(), path
        assert any(lib in path.parents for lib in library), f"{path} is not in the library"
    assert any(path.name == "decoding" for path in library)
    rooms = ("course", "checking", "web", "cli.py", "cli_options.py")
    assert not any(path.name in rooms for path in library)


def test_check_changed_with_nothing_changed_runs_nothing(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "start")
    result = CliRunner().invoke(app, ["check", str(lessons), "--changed", "HEAD"])
    assert result.exit_code == 0, result.output
    assert "nothing to check: no lesson changed since HEAD" in result.output


def test_record_keeps_step_times_and_a_shard_runs_its_steps_only(tmp_path: Path) -> None:
    lessons = make_course(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["check", str(lessons / "knobs"), "--record"])
    assert result.exit_code == 0, result.output
    times = json.loads((lessons / "check-times.json").read_text())["cpython"]
    assert sorted(times) == ["knobs/01-knobs.md", "knobs/02-next.md"]
    junit = tmp_path / "shard.xml"
    result = runner.invoke(
        app, ["check", str(lessons / "knobs"), "--shard", "2/2", "--junit-xml", str(junit)]
    )
    assert result.exit_code == 0, result.output
    ran = {line.split("::")[0] for line in result.output.splitlines() if "::" in line}
    assert len(ran) == 1, result.output
    assert junit.is_file()
