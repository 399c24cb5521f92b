"""Run one lesson cell the way a notebook does, in CPython or in Pyodide.

This module is the Python half of the browser kernel: the worker imports it inside Pyodide and calls
:meth:`Kernel.run` for every cell. The cell check uses the same class in CPython, so a cell behaves
the same in CI as in the learner's browser. It imports only the standard library.

Semantics:

* every step has its own namespace; cells of a step share it, in order;
* the value of a last bare expression is shown (its ``_repr_html_``/``_repr_svg_`` when it has one,
  else its ``repr``), except ``None``;
* a traceback shows only the learner's own frames, numbered as lines of the cell.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import linecache
import sys
import traceback
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from promptdojo.kernel_warm_up import WARM_UP, WARM_UP_KEY, WARM_UP_NUMPY, warm_up_modules
from promptdojo.ui import MAX_TEXT, RUN_KEY, ControlError, ControlRun

__all__ = ["CellResult", "Kernel", "seed_code", "seed_everything"]

#: Prefix of the pseudo-filenames cells are compiled under; only these frames are shown.
CELL_FILENAME_PREFIX = "<cell "


@dataclass
class CellResult:
    """What running a cell produced, apart from the streamed stdout/stderr."""

    ok: bool
    #: Rich or plain rendering of the last expression: ``{"text/plain": ..., "text/html": ...}``.
    value: dict[str, str] = field(default_factory=dict)
    #: Exception class name, e.g. ``"ZeroDivisionError"``, when ``ok`` is false.
    error_type: str | None = None
    error_message: str | None = None
    #: Traceback text with the runtime's frames removed.
    traceback: str | None = None
    #: Line in the cell (1-based) where the error surfaced, if it was in the cell.
    error_line: int | None = None
    #: The controls the cell declared (``promptdojo.ui``), in call order, each with its value.
    controls: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A plain dict, for handing to JavaScript or to a JSON report."""
        return {
            "ok": self.ok,
            "value": dict(self.value),
            "error_type": self.error_type,
            "error_message": self.error_message,
            "traceback": self.traceback,
            "error_line": self.error_line,
            "controls": [dict(c) for c in self.controls],
        }


#: Characters of stdout and stderr together that one cell may show: the browser's worker drops
#: the rest and shows a marker (it reads this from the kernel config), and the check keeps no
#: more in its records. A value's representation longer than this is cut too (:func:`_mime_bundle`).
OUTPUT_CAP = 100_000

#: A value shows as the first of these it has: in the page's live output (``output.js``, through
#: the kernel config) and in its recorded output (``_cell.html``), so both show the same thing.
SHOWN_FIRST = ("text/html", "image/svg+xml", "text/plain")
#: A picture's words (``_repr_figure_``: JSON of its title, a one-line summary, and its data as
#: ``columns`` and ``rows``): the page shows them as the picture's alt text and as a table a
#: screen reader can walk, live (``output.js``) and recorded (``_cell.html``).
FIGURE_MIME = "application/vnd.promptdojo.figure+json"
#: What an HTML value's sandboxed frame starts with, live and recorded alike.
HTML_FRAME_HEAD = (
    '<!doctype html><meta charset="utf-8"><meta name="color-scheme" content="light dark">'
    "<style>body{margin:0;font:14px/1.4 system-ui,sans-serif}</style>"
)


def shown_as(value: dict[str, str]) -> str | None:
    """The representation of ``value`` (a MIME bundle) that is shown, if any."""
    return next((mime for mime in SHOWN_FIRST if value.get(mime) is not None), None)


def figure_words(value: dict[str, str]) -> dict[str, Any] | None:
    """A recorded picture's words (``FIGURE_MIME``) as ``{alt, title, columns, rows}``, or None;
    the rule ``output.js``'s ``figureWords`` follows for a live one."""
    try:
        words = json.loads(value.get(FIGURE_MIME) or "null")
    except ValueError:
        return None
    if not isinstance(words, dict) or not isinstance(words.get("rows"), list):
        return None
    title, summary = words.get("title", ""), words.get("summary", "")
    return {**words, "alt": f"{title}. {summary}" if summary else title}


def _mime_bundle(value: Any) -> dict[str, str]:
    """Render ``value`` the way Jupyter does: rich reprs first, ``repr`` always."""
    bundle: dict[str, str] = {}
    reprs = (
        ("_repr_html_", "text/html"),
        ("_repr_svg_", "image/svg+xml"),
        ("_repr_figure_", FIGURE_MIME),
    )
    for method, mime in reprs:
        render = getattr(value, method, None)
        if callable(render):
            try:
                rendered = render()
            except Exception:  # a broken rich repr falls back to the plain one
                rendered = None
            if isinstance(rendered, str) and len(rendered) <= OUTPUT_CAP:
                bundle[mime] = rendered  # a longer picture or page would show cut: not at all
    try:
        bundle["text/plain"] = repr(value)
    except Exception as exc:  # pragma: no cover - exotic objects
        bundle["text/plain"] = f"<repr failed: {type(exc).__name__}: {exc}>"
    plain = bundle["text/plain"]
    if len(plain) > OUTPUT_CAP:
        more = len(plain) - OUTPUT_CAP
        bundle["text/plain"] = f"{plain[:OUTPUT_CAP]}… ({more:,} more characters)"
    return bundle


#: What ``input()`` says in a cell. A cell runs to its end without pausing (in the browser it runs
#: in a worker that cannot wait for typing), so it says so at once instead of blocking.
INPUT_NOT_SUPPORTED = (
    "input() is not supported in lesson cells: a cell cannot stop and wait for typing. "
    'Put the value in the code instead, e.g. name = "Ada".'
)


def seed_everything(seed: int, numpy: bool = False) -> None:
    """Seed the global random generators a lesson's cells may use without a seed of their own.

    ``lesson.yaml``'s ``seed:`` promises the same numbers on every run: the check and the
    learner's browser call this before a step's first cell. It covers ``random``'s module
    functions and, when ``numpy`` is true, numpy's legacy global generator (``np.random.rand``
    and friends). It cannot cover generators a cell makes without a seed
    (``np.random.default_rng()``, ``random.Random()``), nor wall-clock time or ids.
    """
    import random

    random.seed(seed)
    if numpy:
        import numpy as np

        np.random.seed(seed % 2**32)


def seed_code(seed: int, numpy: bool = False) -> str:
    """The code a page runs before a step's cells to call :func:`seed_everything`."""
    return (
        "from promptdojo.kernel import seed_everything as _seed\n"
        f"_seed({int(seed)}, numpy={bool(numpy)})\n"
        "del _seed"
    )


def _input(prompt: object = "") -> str:
    """Stands in for the built-in ``input`` in every cell namespace."""
    raise RuntimeError(INPUT_NOT_SUPPORTED)


class _UnavailableFinder:
    """A ``sys.meta_path`` finder that fails imports of packages the runtime could not load."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        reason = self.reasons.get(fullname.partition(".")[0])
        if reason is not None:
            raise ModuleNotFoundError(reason, name=fullname)


class Kernel:
    """Namespaces per step, and the code that runs one cell in one of them."""

    def __init__(self) -> None:
        self.namespaces: dict[str, dict[str, Any]] = {}
        self._unavailable = _UnavailableFinder()
        #: Filenames cells were compiled under; only their frames appear in tracebacks.
        self._cell_files: set[str] = set()

    def mark_unavailable(self, package: str, reason: str) -> None:
        """Make ``import package`` fail at once with ``reason`` instead of a bare "No module"."""
        self._unavailable.reasons[package] = reason
        if self._unavailable not in sys.meta_path:
            sys.meta_path.insert(0, self._unavailable)

    def namespace(self, key: str) -> dict[str, Any]:
        """The namespace of step ``key``, created on first use."""
        ns = self.namespaces.get(key)
        if ns is None:
            module = types.ModuleType("__main__")
            ns = module.__dict__
            ns["__builtins__"] = __builtins__
            ns["input"] = _input
            self.namespaces[key] = ns
        return ns

    def reset(self, key: str) -> None:
        """Forget step ``key``'s namespace, so the next run starts clean."""
        self.namespaces.pop(key, None)

    def warm_up(self, numpy: bool = False) -> CellResult:
        """Run a typical cell once, its output discarded, in a namespace of its own.

        In the browser, WebAssembly compiles each function of the interpreter (and of numpy) on
        its first call: the parser, the compiler and the formatting a first cell needs cost some
        200 ms there. The page calls this before it says "ready", so the learner's first Run
        does not pay them. Nothing of it stays: no namespace, no output, no global random state.
        """
        code = WARM_UP + (WARM_UP_NUMPY if numpy else "")
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                return self.run(code, key=WARM_UP_KEY, cell_id="warm-up")
        finally:
            self.reset(WARM_UP_KEY)

    def warm_up_modules(self, names: Iterable[str]) -> list[str]:
        """Call the warm-up of each imported module of ``names`` that has one, unseen
        (:func:`promptdojo.kernel_warm_up.warm_up_modules`); the worker calls this with the
        lesson's imports once it is idle after "ready". Returns the modules warmed up now."""
        return warm_up_modules(names)

    def run(
        self,
        code: str,
        key: str = "default",
        cell_id: str = "cell",
        filename: str | None = None,
        first_line: int = 1,
        controls: str | dict[str, Any] | None = None,
    ) -> CellResult:
        """Run ``code`` in the namespace ``key``.

        Tracebacks name the cell ``<cell ID>`` with lines counted from 1, or, given ``filename``
        and ``first_line``, the file the cell came from with that file's line numbers (the cell
        check uses this to point at the markdown).

        ``controls`` holds the values the page chose for the cell's controls, by name (a dict or
        its JSON text); without it every control returns its default.
        """
        filename = filename or f"{CELL_FILENAME_PREFIX}{cell_id}>"
        self._cell_files.add(filename)
        remember_source(filename, code, first_line)
        ns = self.namespace(key)
        try:
            tree = ast.parse(code, filename=filename, mode="exec")
        except SyntaxError as exc:
            if exc.lineno is not None:
                exc.lineno += first_line - 1
            return self._syntax_error(exc)
        if first_line != 1:
            ast.increment_lineno(tree, first_line - 1)
        last_expr: ast.Expression | None = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last_expr = ast.Expression(body=tree.body.pop().value)
        try:
            run = ControlRun(values=control_values(controls))
        except ControlError as exc:
            return CellResult(
                ok=False, error_type="ControlError", error_message=str(exc), traceback=str(exc)
            )
        ns[RUN_KEY] = run
        try:
            # Lines are kept: `ast.parse` records them and the code objects carry them on.
            exec(compile(tree, filename, "exec"), ns)
            value = None
            if last_expr is not None:
                value = eval(compile(last_expr, filename, "eval"), ns)
        except BaseException as exc:
            if isinstance(exc, SystemExit | GeneratorExit):
                raise
            failed = self._runtime_error(exc, self._cell_files)
            failed.controls = run.declared
            return failed
        finally:
            ns.pop(RUN_KEY, None)
        result = CellResult(ok=True, controls=run.declared)
        if value is not None:
            ns["_"] = value
            result.value = _mime_bundle(value)
        return result

    @staticmethod
    def _syntax_error(exc: SyntaxError) -> CellResult:
        text = "".join(traceback.format_exception_only(type(exc), exc))
        return CellResult(
            ok=False,
            error_type=type(exc).__name__,
            error_message=exc.msg,
            traceback=text,
            error_line=exc.lineno,
        )

    @staticmethod
    def _runtime_error(exc: BaseException, cell_files: set[str]) -> CellResult:
        frames = [
            frame
            for frame in traceback.extract_tb(exc.__traceback__)
            if frame.filename in cell_files
        ]
        lines = ["Traceback (most recent call last):\n"] if frames else []
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(type(exc), exc)
        return CellResult(
            ok=False,
            error_type=type(exc).__name__,
            error_message=str(exc),
            traceback="".join(lines),
            error_line=frames[-1].lineno if frames else None,
        )


def remember_source(filename: str, code: str, first_line: int = 1) -> None:
    """Give ``linecache`` the cell's lines under ``filename``, from ``first_line`` on, so that
    tracebacks and warnings show the source line (and carets) of a cell and of the functions it
    defines: in the browser a cell is no file, and under ``check --pyodide`` the markdown file is
    not in Pyodide's file system. Other cells of the same file keep their lines."""
    entry = linecache.cache.get(filename)
    kept = entry is not None and len(entry) == 4 and entry[1] is None
    # A cell of its own (``<cell ID>``) is replaced whole; a file's other cells stay.
    lines = list(entry[2]) if kept and not filename.startswith("<") else []
    new = code.splitlines(keepends=True)
    if new and not new[-1].endswith("\n"):
        new[-1] += "\n"
    start = first_line - 1
    lines += ["\n"] * max(0, start + len(new) - len(lines))
    lines[start : start + len(new)] = new
    # No modification time: linecache.checkcache keeps the entry (it is no file to re-read).
    linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)


#: Values one run may carry: a few more than a cell may declare, for controls since removed.
MAX_CONTROL_VALUES = 32


def control_values(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """The page's control values, checked to be plain data: names to booleans, numbers or text.

    A value is never code: anything but a flat ``{name: bool | number | text}`` is refused with a
    :class:`ControlError` before the cell runs.
    """
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise ControlError(f"the control values are not JSON ({exc})") from None
    if not isinstance(raw, dict) or len(raw) > MAX_CONTROL_VALUES:
        raise ControlError(
            f"control values must be a mapping of at most {MAX_CONTROL_VALUES} names"
        )
    for name, value in raw.items():
        plain = isinstance(value, bool | int | float) or (
            isinstance(value, str) and len(value) <= MAX_TEXT
        )
        if not isinstance(name, str) or len(name) > MAX_TEXT or not plain:
            raise ControlError(
                f"the control {name!r} was sent the value {value!r}: a control's value is "
                f"True/False, a number, or a text of at most {MAX_TEXT} characters"
            )
    return dict(raw)


def main() -> None:  # pragma: no cover - convenience for trying the kernel by hand
    """Run stdin as one cell and print the result (``python -m promptdojo.kernel``)."""
    result = Kernel().run(sys.stdin.read())
    print(result.to_dict())


if __name__ == "__main__":  # pragma: no cover
    main()
