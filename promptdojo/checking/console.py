"""The terminal side of ``promptdojo check``: a progress bar on a terminal, plain lines in CI."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from promptdojo.checking.backends.cpython import run_step_in_process
from promptdojo.checking.orchestrator import check
from promptdojo.checking.outcome import CheckResult, Status, StepResult
from promptdojo.checking.record import drift, noise_hint, stale, write_records
from promptdojo.checking.report import (
    format_failure,
    junit_xml,
    plain_line,
    plural,
    slow_cells,
    summary,
)
from promptdojo.checking.show import show_step

if TYPE_CHECKING:
    from promptdojo.pyodide.release import Release


def interactive() -> bool:
    """A progress bar only for a person at a terminal: not under CI, not when piped."""
    return sys.stdout.isatty() and os.environ.get("CI", "").lower() not in ("true", "1")


def run_check(
    paths: list[Path],
    jobs: int | None = None,
    junit_xml: Path | None = None,
    record: bool = False,
    check_outputs: bool = False,
    show: bool = False,
    pyodide_cache: Path | None = None,
    pyodide_release: Release | None = None,
    snapshot_cache: Path | None = None,
    pass_env: Sequence[str] = (),
) -> int:
    """Run the check, print as it goes, write the reports; return the exit status.

    ``pyodide_cache`` runs the cells in the built-in Pyodide with packages from that cache;
    ``pyodide_release`` runs them in an unpacked Pyodide release with its own wheels. Either
    restores the memory snapshot kept in ``snapshot_cache``, made there if missing (``None``:
    every step boots from scratch). ``pass_env`` names variables the cells see besides the
    allowed ones (:mod:`promptdojo.checking.environment`). ``show`` prints what each visible
    cell printed and showed (:mod:`promptdojo.checking.show`).
    """
    run_step = None
    if pyodide_cache is not None or pyodide_release is not None:
        from promptdojo.checking.backends.pyodide import pyodide_step_runner

        run_step = pyodide_step_runner(
            pyodide_cache or Path("."),
            pyodide_release,
            snapshot_cache=snapshot_cache,
            pass_env=pass_env,
        )
    in_pyodide = run_step is not None
    if pass_env and not in_pyodide:
        run_step = functools.partial(run_step_in_process, pass_env=tuple(pass_env))
    echo: Callable[[str], None] = print
    if interactive():
        result = _with_progress(paths, jobs, run_step)
    else:
        announced: set[tuple[str, str]] = set()

        def on_step(step: StepResult) -> None:
            not_run = {o.message for o in step.outcomes if o.status is Status.NOT_RUN}
            if len(not_run) == 1 and all(o.status is Status.NOT_RUN for o in step.outcomes):
                # One line per lesson, not one identical line per cell.
                (message,) = not_run
                if (step.lesson.id, message) not in announced:
                    announced.add((step.lesson.id, message))
                    echo(f"NOT-RUN {step.lesson.path}: {message.removeprefix('not run: ')}")
                return
            for outcome in step.outcomes:
                echo(plain_line(outcome, step.step.number))

        kwargs = {"run_step": run_step} if run_step is not None else {}
        result = check(paths, jobs=jobs, on_step=on_step, on_warning=echo, **kwargs)
    if record:
        _keep_times(result, "pyodide" if in_pyodide else "cpython", echo)
    if show:
        for step in result.steps:
            for line in show_step(step):
                echo(line)
    return _finish(result, junit_xml, record, check_outputs, echo, slow_warnings=in_pyodide)


def _keep_times(result: CheckResult, runtime: str, echo: Callable[[str], None]) -> None:
    """Each step's wall time, for ``--shard`` to balance by (promptdojo.checking.scope)."""
    from promptdojo.checking.scope import write_times

    by_dir: dict[Path, dict[str, float]] = {}
    for step in result.steps:
        if step.selected is None:  # a whole step ran
            times = by_dir.setdefault(step.lesson.path.parent, {})
            times[f"{step.lesson.path.name}/{step.step.path.name}"] = step.seconds
    for folder, times in by_dir.items():
        echo(f"step times kept in {write_times(folder, runtime, times)}")


def _with_progress(paths: list[Path], jobs: int | None, run_step) -> CheckResult:
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ) as progress:
        task = progress.add_task("checking cells", total=None)

        def on_plan(total: int) -> None:
            progress.update(task, total=total)

        def on_step(step: StepResult) -> None:
            failed = sum(o.status is Status.FAILED for o in step.outcomes)
            progress.update(task, advance=len(step.outcomes))
            mark = "[red]✗[/red]" if failed else "[green]✓[/green]"
            # A FILE path is never wrapped, so it stays clickable and copyable on a narrow terminal.
            progress.console.print(
                f"{mark} {escape(str(step.step.path))} ({step.seconds:.1f} s)", soft_wrap=True
            )

        def on_warning(text: str) -> None:
            progress.console.print(escape(text), soft_wrap=True)

        kwargs = {"run_step": run_step} if run_step is not None else {}
        return check(
            paths, jobs=jobs, on_step=on_step, on_plan=on_plan, on_warning=on_warning, **kwargs
        )


def _finish(
    result: CheckResult,
    junit_path: Path | None,
    record: bool,
    check_outputs: bool,
    echo: Callable[[str], None],
    slow_warnings: bool = False,
) -> int:
    code = result.exit_code
    for diagnostic in result.diagnostics:
        echo(str(diagnostic))
    failures = [(o, s) for s in result.steps for o in s.outcomes if o.status is Status.FAILED]
    for outcome, step in failures:
        echo("")
        echo(format_failure(outcome, step))
    if slow_warnings:
        for warning in slow_cells(result):
            echo(warning)
    changes: list = []
    old: list = []
    if check_outputs:
        changes = drift(result)
        for where, cell_id, diff in changes:
            echo("")
            echo(f"{where}: cell {cell_id!r}: output differs from its record")
            echo(diff)
            hint = noise_hint(diff)
            if hint:
                echo(hint)
        old = stale(result)
        if old:
            echo("")
        for where, cell_id, why in old:
            echo(f"{where}: cell {cell_id!r}: {why}")
        if changes or old:
            code = 1
        if changes:
            echo(
                f"\n{plural(len(changes), 'output')} drifted; "
                "`promptdojo check --record` accepts them"
            )
    if record:
        for path in write_records(result):
            echo(f"recorded {path}")
    if junit_path is not None:
        junit_path.write_text(junit_xml(result), encoding="utf-8")
    echo("")
    echo(f"{summary(result, len(changes), len(old))} in {result.seconds:.1f} s")
    return code
