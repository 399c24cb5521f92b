"""The cell kernel: namespaces, last-expression values, rich reprs and trimmed tracebacks."""

from __future__ import annotations

import sys

import pytest

from promptdojo.kernel import INPUT_NOT_SUPPORTED, Kernel


def test_cells_of_a_step_share_a_namespace_and_steps_do_not() -> None:
    kernel = Kernel()
    assert kernel.run("x = 41", key="a").ok
    assert kernel.run("x + 1", key="a").value["text/plain"] == "42"
    other = kernel.run("x", key="b")
    assert not other.ok
    assert other.error_type == "NameError"


def test_only_a_last_bare_expression_is_shown() -> None:
    kernel = Kernel()
    assert kernel.run("1 + 1\ny = 3").value == {}
    assert kernel.run("None").value == {}
    assert kernel.run("print('hi')").value == {}
    assert kernel.run("[1, 2]").value == {"text/plain": "[1, 2]"}


def test_rich_reprs_come_with_the_plain_one() -> None:
    code = (
        "class Pic:\n"
        "    def _repr_svg_(self):\n"
        "        return '<svg/>'\n"
        "    def __repr__(self):\n"
        "        return 'Pic()'\n"
        "Pic()"
    )
    assert Kernel().run(code).value == {"image/svg+xml": "<svg/>", "text/plain": "Pic()"}


def test_traceback_uses_cell_lines_and_hides_the_kernel() -> None:
    code = "def f(x):\n    return 1 / x\n\nf(0)"
    result = Kernel().run(code, cell_id="c7")
    assert not result.ok
    assert result.error_type == "ZeroDivisionError"
    assert result.error_line == 2
    assert result.traceback is not None
    assert 'File "<cell c7>", line 4, in <module>' in result.traceback
    assert 'File "<cell c7>", line 2, in f' in result.traceback
    assert "kernel.py" not in result.traceback


def test_syntax_error_reports_its_line() -> None:
    result = Kernel().run("x = 1\nif x\n    pass", cell_id="s")
    assert not result.ok
    assert result.error_type == "SyntaxError"
    assert result.error_line == 2


def test_keyboard_interrupt_is_a_cell_failure_not_a_kernel_crash() -> None:
    result = Kernel().run("raise KeyboardInterrupt")
    assert not result.ok
    assert result.error_type == "KeyboardInterrupt"


def test_system_exit_is_not_swallowed() -> None:
    with pytest.raises(SystemExit):
        Kernel().run("raise SystemExit(3)")


def test_reset_forgets_a_namespace() -> None:
    kernel = Kernel()
    kernel.run("x = 1", key="k")
    kernel.reset("k")
    assert kernel.run("x", key="k").error_type == "NameError"


def test_an_unavailable_package_fails_at_once_with_the_reason() -> None:
    kernel = Kernel()
    kernel.mark_unavailable("promptdojo_missing_pkg", "not in the package cache")
    try:
        result = kernel.run("import promptdojo_missing_pkg.sub")
    finally:
        import sys

        sys.meta_path.remove(kernel._unavailable)
    assert result.error_type == "ModuleNotFoundError"
    assert result.error_message == "not in the package cache"


def test_tracebacks_can_point_at_the_markdown_file_and_line(tmp_path) -> None:
    md = tmp_path / "01-step.md"
    md.write_text("---\ntitle: T\n---\n\n```python\ndef f(x):\n    return 1 / x\nf(0)\n```\n")
    result = Kernel().run("def f(x):\n    return 1 / x\nf(0)", filename=str(md), first_line=6)
    assert result.error_line == 7
    assert f'File "{md}", line 8, in <module>' in result.traceback
    assert f'File "{md}", line 7, in f' in result.traceback
    assert "return 1 / x" in result.traceback  # the source line comes from the markdown file
    syntax = Kernel().run("x = 1\nif x\n    pass", filename=str(md), first_line=6)
    assert syntax.error_line == 7


def test_input_says_plainly_that_it_is_not_supported() -> None:
    kernel = Kernel()
    result = kernel.run('name = input("Your name? ")\nprint(name)', cell_id="ask")
    assert not result.ok
    assert result.error_type == "RuntimeError"
    assert result.error_message == INPUT_NOT_SUPPORTED
    assert result.error_line == 1
    # Only the learner's line is in the traceback, not the stand-in's frame.
    assert result.traceback.count('File "') == 1


def test_the_warm_up_runs_a_typical_cell_and_leaves_nothing_behind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import random

    import numpy as np

    kernel = Kernel()
    kernel.run("x = 1", key="step")
    random.seed(5)
    np.random.seed(5)
    before = (random.getstate(), np.random.get_state()[1].tolist())
    result = kernel.warm_up(numpy=True)
    assert result.ok, result.traceback
    assert result.value is not None  # its last expression went through the display path
    assert list(kernel.namespaces) == ["step"]
    assert capsys.readouterr() == ("", "")
    assert (random.getstate(), np.random.get_state()[1].tolist()) == before


def test_the_warm_up_without_numpy_works_where_numpy_cannot_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` now fails
    kernel = Kernel()
    assert kernel.warm_up().ok
    assert not kernel.warm_up(numpy=True).ok


def test_a_cells_traceback_and_warnings_show_its_source_lines() -> None:
    """A cell is no file: the kernel gives linecache its lines, as the browser needs."""
    import subprocess
    import sys

    kernel = Kernel()
    assert kernel.run("def half(x):\n    return x / 0\n", cell_id="define").ok
    result = kernel.run("y = 1\nhalf(y)\n", cell_id="use")
    assert result.traceback == (
        "Traceback (most recent call last):\n"
        '  File "<cell use>", line 2, in <module>\n'
        "    half(y)\n"
        '  File "<cell define>", line 2, in half\n'
        "    return x / 0\n"
        "           ~~^~~\n"
        "ZeroDivisionError: division by zero\n"
    )
    # Warnings as Python shows them, outside pytest's own capture of warnings.
    script = (
        "from promptdojo.kernel import Kernel\n"
        "Kernel().run('import warnings\\nwarnings.warn(\"hot\", RuntimeWarning)', cell_id='w')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert (
        done.stderr == '<cell w>:2: RuntimeWarning: hot\n  warnings.warn("hot", RuntimeWarning)\n'
    )
