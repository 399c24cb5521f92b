from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings


@pytest.fixture
def client(fixture_lessons: Path, tmp_path: Path) -> TestClient:
    app = create_app(Settings(lessons_dir=fixture_lessons, package_cache_dir=tmp_path / "pkgs"))
    return TestClient(app)
