"""No Python module over 400 lines: a longer one does more than one job; split it by job.

(No JavaScript function over 80 lines: ``tests/js/functions.test.mjs``.)
"""

from __future__ import annotations

from pathlib import Path

import promptdojo

PACKAGE = Path(promptdojo.__file__).parent
MAX_LINES = 400


def test_no_module_is_over_400_lines() -> None:
    long = {
        path.relative_to(PACKAGE).as_posix(): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long
