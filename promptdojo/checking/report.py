"""How ``promptdojo check`` reports: failures at their markdown lines, progress, and JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from promptdojo.checking.outcome import CellOutcome, CheckResult, Status, StepResult, cells_of
from promptdojo.course.model import Step


def test_id(outcome: CellOutcome, step_number: int) -> str:
    """``<file>::<step>::<cell-id>``, the same id the pytest plugin uses."""
    return f"{outcome.path}::{step_number}::{outcome.cell_id}"


def _error_lines(outcome: CellOutcome) -> set[int]:
    """Markdown lines the traceback names in the cell's own file."""
    lines = set()
    marker = f'File "{outcome.path}", line '
    for line in outcome.traceback.splitlines():
        if marker in line:
            number = line.split(marker, 1)[1].split(",", 1)[0]
            if number.isdigit():
                lines.add(int(number))
    return lines


def excerpt(outcome: CellOutcome, code_lines: int, context: int = 0) -> str:
    """The cell's code, numbered with markdown line numbers; ``>`` marks the failing lines."""
    try:
        text = Path(outcome.path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return ""
    first = outcome.line
    last = min(len(text), first + code_lines - 1 + context)
    marks = _error_lines(outcome)
    width = len(str(last))
    return "\n".join(
        f"{'>' if n in marks else ' '} {n:>{width}} | {text[n - 1]}" for n in range(first, last + 1)
    )


def code_lines_at(step: Step, outcome: CellOutcome) -> int:
    """How many code lines the cell (or exercise part) at the outcome's line has."""
    parts = [*step.setup, *step.cells]
    for exercise in step.exercises:
        parts += [exercise.check] + ([exercise.solution] if exercise.solution else [])
        parts += exercise.wrong
    for cell in parts:
        if cell.first_line == outcome.line and str(cell.location.path) == outcome.path:
            return cell.code.count("\n") + 1
    return 1


def format_failure(outcome: CellOutcome, step: StepResult) -> str:
    """``file:line: cell: what went wrong``, a numbered excerpt, and the mapped traceback."""
    lines = code_lines_at(step.step, outcome)
    parts = [f"{outcome.path}:{outcome.line}: cell {outcome.cell_id!r}: {outcome.message}"]
    code = excerpt(outcome, lines)
    if code:
        parts.append(code)
    if outcome.traceback:
        parts.append(outcome.traceback.rstrip())
    return "\n".join(parts)


def plural(count: int, noun: str, many: str = "") -> str:
    """``1 output``, ``2 outputs``; ``many`` when the plural is not ``noun + "s"``."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def summary(result: CheckResult, drifted: int = 0, stale: int = 0) -> str:
    """The closing line: ``N passed, N failed, N skipped`` (CI reads it), then what else failed.

    ``drifted`` outputs differ from their records; ``stale`` records were made from other code.
    """
    counts = [f"{result.count(Status.PASSED)} passed", f"{result.count(Status.FAILED)} failed"]
    counts.append(f"{result.count(Status.SKIPPED)} skipped")
    if result.count(Status.NOT_RUN):
        counts.append(f"{result.count(Status.NOT_RUN)} not run")
    if result.diagnostics:
        counts.append(plural(len(result.diagnostics), "validation error"))
    if drifted:
        counts.append(f"{plural(drifted, 'output')} drifted")
    if stale:
        counts.append(f"{plural(stale, 'stale record')}")
    return ", ".join(counts)


def _limit_of(step: StepResult, cell_id: str) -> float | None:
    cell = next((c for c in cells_of(step.step) if c.id == cell_id), None)
    return None if cell is None else step.lesson.time_limit_of(cell)


def slow_cells(result: CheckResult, share: float = 0.5) -> list[str]:
    """A warning for every cell that used more than ``share`` of its time limit.

    Such a cell passes here, but a learner's computer slower than this one may stop it.
    """
    warnings = []
    for step in result.steps:
        for outcome in step.outcomes:
            limit = _limit_of(step, outcome.cell_id)
            if limit is None or outcome.status is not Status.PASSED:
                continue
            if outcome.seconds > share * limit:
                warnings.append(
                    f"{outcome.path}:{outcome.line}: warning: cell {outcome.cell_id!r} took "
                    f"{outcome.seconds:.1f} s, more than {share:.0%} of its {limit:g} s time "
                    "limit: a slower computer may stop it. Make it lighter (less data, one batched "
                    "computation instead of a Python loop) or raise its `time_limit=`."
                )
    return warnings


def plain_line(outcome: CellOutcome, step_number: int) -> str:
    """One line per cell for logs: ``PASSED file::step::cell (0.12 s)``."""
    label = outcome.status.value.upper().replace(" ", "-")
    text = f"{label} {test_id(outcome, step_number)} ({outcome.seconds:.2f} s)"
    if outcome.status in (Status.SKIPPED, Status.NOT_RUN) and outcome.message:
        text += f": {outcome.message}"
    return text


def junit_xml(result: CheckResult) -> str:
    """A JUnit report: one test suite per lesson, one test case per cell."""
    root = ET.Element("testsuites", name="promptdojo check", time=f"{result.seconds:.3f}")
    suites: dict[str, ET.Element] = {}
    for step in result.steps:
        suite = suites.get(step.lesson.id)
        if suite is None:
            suite = ET.SubElement(root, "testsuite", name=step.lesson.id)
            suites[step.lesson.id] = suite
        for outcome in step.outcomes:
            case = ET.SubElement(
                suite,
                "testcase",
                classname=f"{outcome.path}::{step.step.number}",
                name=outcome.cell_id,
                file=outcome.path,
                line=str(outcome.line),
                time=f"{outcome.seconds:.3f}",
            )
            if outcome.status is Status.FAILED:
                failure = ET.SubElement(case, "failure", message=outcome.message)
                failure.text = format_failure(outcome, step)
            elif outcome.status in (Status.SKIPPED, Status.NOT_RUN):
                ET.SubElement(case, "skipped", message=outcome.message)
    if result.diagnostics:
        suite = ET.SubElement(root, "testsuite", name="validation")
        for d in result.diagnostics:
            case = ET.SubElement(suite, "testcase", classname="validation", name=str(d.location))
            ET.SubElement(case, "failure", message=d.message).text = str(d)
    for suite in root:
        cases = list(suite)
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
        suite.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))
        suite.set("errors", "0")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
