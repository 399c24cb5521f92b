"""The learner bundle is deterministic, so its hash changes only when its sources do."""

from __future__ import annotations

from pathlib import Path

from promptdojo.pyodide.bundle import build_bundle


def test_same_sources_give_the_same_bytes(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("x = 1\n")
    (tmp_path / "kernel.py").write_text("y = 2\n")
    first, second = build_bundle(tmp_path), build_bundle(tmp_path)
    assert first.data == second.data
    assert first.filename == second.filename


def test_a_changed_source_changes_the_hash(tmp_path: Path) -> None:
    (tmp_path / "__init__.py").write_text("x = 1\n")
    before = build_bundle(tmp_path).digest
    (tmp_path / "__init__.py").write_text("x = 2\n")
    assert build_bundle(tmp_path).digest != before


def test_only_learner_modules_go_in(tmp_path: Path) -> None:
    for name in ("__init__.py", "kernel.py", "cli.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "app.py").write_text("")
    (tmp_path / "tinylm").mkdir()
    (tmp_path / "tinylm" / "model.py").write_text("")
    (tmp_path / "tinylm" / "__pycache__").mkdir()
    (tmp_path / "tinylm" / "__pycache__" / "model.cpython-311.pyc").write_bytes(b"")
    assert build_bundle(tmp_path).files == (
        "promptdojo/__init__.py",
        "promptdojo/kernel.py",
        "promptdojo/tinylm/model.py",
    )
