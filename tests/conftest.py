"""Shared fixtures: the fixture lessons, the real lessons, and an app built on either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.upstream import Upstream, running_upstream

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_LESSONS = ROOT / "tests" / "fixtures" / "lessons"
REAL_LESSONS = ROOT / "lessons"


@pytest.fixture(scope="session")
def fixture_lessons() -> Path:
    """Small lessons whose cells need only the standard library."""
    return FIXTURE_LESSONS


@pytest.fixture(scope="session")
def real_lessons() -> Path:
    """The lessons the project ships."""
    return REAL_LESSONS


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    """A fake Pyodide package upstream on loopback (see ``tests/upstream.py``)."""
    yield from running_upstream()
