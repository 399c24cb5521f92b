"""The cell the kernel runs once, unseen, before the page says "ready" (``Kernel.warm_up``).

In the browser, WebAssembly compiles each function of the interpreter (and of numpy) on its first
call; running a cell like a lesson's first moves that cost off the learner's first Run.
"""

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
