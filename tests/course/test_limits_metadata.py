"""lesson.yaml's limits on each cell's process under `check`: read, typed and checked."""

from __future__ import annotations

from pathlib import Path

from promptdojo.course.parse import read_lesson


def lesson(folder: Path, extra: str) -> Path:
    folder.mkdir()
    (folder / "lesson.yaml").write_text(f'id: limits\ntitle: Limits\nchapter: "ch 0"\n{extra}')
    (folder / "01-a.md").write_text("---\ntitle: A\n---\n\n# A\n\n```python\nx = 1\n```\n")
    return folder


def test_the_limits_are_read(tmp_path: Path) -> None:
    read = read_lesson(
        lesson(tmp_path / "l", "memory_limit_mb: 512\ncpu_limit: 2.5\nfile_size_limit_mb: 8\n"),
        None,
    )
    assert read.problems == ()
    assert (read.memory_limit_mb, read.cpu_limit, read.file_size_limit_mb) == (512, 2.5, 8)
    default = read_lesson(lesson(tmp_path / "d", ""), None)
    assert (default.memory_limit_mb, default.cpu_limit, default.file_size_limit_mb) == (None,) * 3


def test_bad_limits_are_reported_at_their_line(tmp_path: Path) -> None:
    folder = lesson(
        tmp_path / "l", "memory_limit_mb: lots\ncpu_limit: 0\nfile_size_limit_mb: 1.5\n"
    )
    problems = [str(d) for d in read_lesson(folder, None).problems]
    yaml = folder / "lesson.yaml"
    assert any(
        p.startswith(f"{yaml}:4: 'memory_limit_mb' must be a whole number") for p in problems
    )
    assert any(
        p.startswith(f"{yaml}:5: cpu_limit must be a positive number of seconds") for p in problems
    )
    assert any(p.startswith(f"{yaml}:6: 'file_size_limit_mb' must be a whole") for p in problems)
