"""What the kernel does before the page says "ready", so that the learner's first Run does not:
the step's modules imported (``import_modules``), a cell run once, unseen (``Kernel.warm_up``);
and the learner library's own warm-ups, run once the kernel is idle after it
(``Kernel.warm_up_modules``).

In the browser, WebAssembly compiles each function of the interpreter (and of numpy) on its first
call, and compiles the hot ones again, optimized, in the background; running a cell like a
lesson's first moves that cost off the learner's first Run.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Iterable, Iterator

#: What a module of the learner library defines when its first calls cost much in the browser
#: (the tiny model's first forward pass): a function of no arguments, run unseen, once, after
#: "ready" when no cell has run for half a second, if the lesson imports the module
#: (static/js/kernel/worker.js).
HOOK = "_kernel_warm_up"

WARM_UP_KEY = "\0warm-up"
#: A cell like a lesson's first: a loop, f-strings, a dict, a traceback caught, a last value.
WARM_UP = """\
values = [0.60, 0.25, 0.15]
total = 0.0
for i, v in enumerate(values):
    total += v * i
print(f"{total:.3f}", dict(zip("abc", values)), sorted(values))
try:
    {}["missing"]
except KeyError:
    import traceback as _tb
    _tb.format_exc()
{"total": round(total, 3)}
"""
#: numpy's everyday calls, with a generator of its own (the global one is the lesson's).
WARM_UP_NUMPY = """\
import numpy as np
x = np.log(np.array(values))
p = np.exp(x - x.max())
p /= p.sum()
rng = np.random.default_rng(0)
grid = np.arange(6.0).reshape(2, 3)
print(p.round(3).tolist(), int(np.argmax(p)), rng.choice(3, size=4, p=p), grid @ grid.T)
grid
"""


#: The modules whose warm-up has run in this interpreter: each runs once.
_WARMED: set[str] = set()


def import_modules(names: Iterable[str]) -> list[str]:
    """Import each of ``names`` into the interpreter, not into any cell's namespace, in order;
    returns those that imported. One that fails is left for the cell that imports it to report,
    with its traceback. Its error ends here, in Python: carried out to JavaScript, each one cost
    some milliseconds of formatting (a page without numpy has several: numpy and every module
    of the learner library that needs it).
    """
    done: list[str] = []
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # the cell that imports it shows whatever it is (SystemExit too)
            continue
        done.append(name)
    return done


def warm_up_modules(names: Iterable[str]) -> list[str]:
    """Call :data:`HOOK` of each imported module of ``names`` that has one, unseen, once.

    A module inside a package uses its package's (``a.b.c`` looks in ``a.b.c``, ``a.b``, ``a``).
    Returns the modules whose warm-up ran now (not those warmed before); one that fails is
    skipped, and its cost stays with the first Run that needs it. Nothing of it stays: no
    output, no global random state.
    """
    warmed: list[str] = []
    for name in _with_packages(names):
        hook = getattr(sys.modules.get(name), HOOK, None)
        if name in _WARMED or not callable(hook):
            continue
        _WARMED.add(name)
        out = io.StringIO()
        with _random_state_kept(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                hook()
            except Exception:  # the first Run that needs it shows whatever it is
                continue
        warmed.append(name)
    return warmed


def _with_packages(names: Iterable[str]) -> list[str]:
    """``names`` and the packages above each (``a.b.c`` gives ``a.b.c``, ``a.b``, ``a``), once."""
    found: dict[str, None] = {}
    for name in names:
        parts = str(name).split(".")
        for end in range(len(parts), 0, -1):
            found.setdefault(".".join(parts[:end]))
    return list(found)


@contextlib.contextmanager
def _random_state_kept() -> Iterator[None]:
    """Put back the global random states (``random``'s, and numpy's if imported) afterwards."""
    import random

    numpy = sys.modules.get("numpy")
    kept = random.getstate(), numpy.random.get_state() if numpy else None
    try:
        yield
    finally:
        random.setstate(kept[0])
        if numpy is not None:
            numpy.random.set_state(kept[1])
