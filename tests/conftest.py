"""Shared fixtures: the fixture lessons, the real lessons, and an app built on either."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # this conftest also loads inside Pyodide, where only the learner API exists
    from promptdojo.pyodide.release import Release
    from tests.support.upstream import Upstream

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
    """A fake Pyodide package upstream on loopback (see ``tests/support/upstream.py``)."""
    from tests.support.upstream import running_upstream

    yield from running_upstream()


@pytest.fixture(scope="session")
def numpy_release() -> Release:
    """A real Pyodide 0.29.0 release with its official numpy (``tests/support/numpy_release.py``).

    Built once and cached. Where it cannot be built, tests that need it are skipped with the
    reason; under ``CI=true`` they fail instead, so CI never passes without running them.
    """
    from tests.support.numpy_release import ReleaseUnavailableError, build

    try:
        return build()
    except ReleaseUnavailableError as exc:
        message = f"no Pyodide release with numpy: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (tests that need it never skip under CI=true)")
        pytest.skip(message)
