"""One backend per runtime, behind one interface: ``backend(lesson, step) -> StepResult``.

* :mod:`.cpython`: each step in a CPython process of its own (:mod:`.cpython_step` is that
  process), forked from a warm parent on Linux (:mod:`.forked`, :mod:`.warm`);
* :mod:`.pyodide`: each step in real Pyodide under Node (:mod:`.pyodide_step` runs inside it).

Both hand the step over as a JSON job file and read the outcomes back from a file
(:mod:`.process`), so what cells print cannot garble them, and a crash still leaves the cells
that finished.
"""

from __future__ import annotations

from collections.abc import Callable

from promptdojo.checking.outcome import StepResult
from promptdojo.course.model import Lesson, Step

#: Runs one step of a lesson and reports every cell.
Backend = Callable[[Lesson, Step], StepResult]

__all__ = ["Backend"]
