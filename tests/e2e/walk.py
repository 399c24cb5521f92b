"""Walk a lesson as a learner does: every step in place, every cell Run, every exercise Checked.

The end-to-end test asserts on what the walk saw; the per-cell benchmark reports its times. Both
drive the real page: the Run and Check buttons, the editor, the Next step link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

from playwright.sync_api import Locator, Page, expect

from promptdojo.course.model import Cell, CellKind, Lesson, Step
from promptdojo.course.records import load_records
from tests.e2e.conftest import wait_ready

#: Seconds a cell may take in the walk beyond its own time limit (its step's set-up runs first).
MARGIN_S = 30

#: Records every kernel run of the page with the time the worker spent in Python.
_RECORD_RUNS = """() => {
  const kernel = window.promptdojoKernel;
  if (kernel.__walkRuns) return;
  kernel.__walkRuns = [];
  const run = kernel.run.bind(kernel);
  kernel.run = (code, options) =>
    run(code, options).then((result) => {
      kernel.__walkRuns.push({ cellId: options.cellId, ms: result.ms ?? null, ok: result.ok });
      return result;
    });
}"""

#: What a cell's output area shows, in the recorded-output shape (stdout, stderr, value).
_SHOWN = """(output) => {
  const text = (selector) =>
    [...output.querySelectorAll(`:scope > ${selector}`)].map((e) => e.textContent).join("");
  const shown = { stdout: text("pre.stdout"), stderr: text("pre.stderr"), value: {} };
  const img = output.querySelector(":scope > img.value");
  const plain = output.querySelector(":scope > pre.value");
  const error = output.querySelector(":scope > pre.error");
  if (img) shown.value["image/svg+xml"] = img.getAttribute("src");
  if (plain) shown.value["text/plain"] = plain.textContent;
  if (error) shown.error = error.textContent;
  return shown;
}"""


@dataclass
class CellRun:
    """What one visible cell did in the browser."""

    step: int
    cell: Cell
    status: str
    shown: dict
    recorded: dict | None
    problems: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.cell.location.path}:{self.cell.first_line} ({self.cell.id})"


def _comparable(shown: dict) -> dict:
    """The shown output with the picture's data URL decoded, as the record keeps it."""
    value = dict(shown.get("value", {}))
    svg = value.get("image/svg+xml")
    if svg is not None:
        value["image/svg+xml"] = unquote(svg.split(",", 1)[1])
    return {"stdout": shown["stdout"], "stderr": shown["stderr"], "value": value}


def _expected(recorded: dict) -> dict:
    """The record as the page would show it: a picture hides the plain-text repr beside it."""
    value = recorded.get("value", {})
    if "image/svg+xml" in value:
        value = {"image/svg+xml": value["image/svg+xml"]}
    elif "text/plain" in value:
        value = {"text/plain": value["text/plain"]}
    return {"stdout": recorded["stdout"], "stderr": recorded["stderr"], "value": value}


def _wait_done(section: Locator, seconds: float) -> str:
    """Wait until the cell has finished and shows all of its output; return its status."""
    status = section.locator(".cell-status")
    expect(status).not_to_have_text("Running…", timeout=seconds * 1000)
    expect(status).not_to_have_text("", timeout=5000)
    for picture in section.locator(".cell-output img").all():
        expect(picture).to_have_js_property("complete", True)
    return status.inner_text()


def _press(section: Locator, name: str) -> None:
    """Press a cell's button from the keyboard (focus, Enter), as a keyboard user does.

    A mouse click aims at coordinates, and under load the page can still be settling (a picture
    above decoding, a scroll) between Playwright's aim and the click, which then hits nothing.
    The keyboard goes to the focused button wherever it is.
    """
    section.get_by_role("button", name=name, exact=True).press("Enter")


def _replace_code(page: Page, section: Locator, code: str) -> None:
    section.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)  # as pasted: no auto-indent


def _run_cell(page: Page, lesson: Lesson, step: Step, cell: Cell) -> CellRun:
    section = page.locator(f"#cell-{cell.id}")
    limit = lesson.time_limit_of(cell) + MARGIN_S
    records = load_records(step)
    exercise = step.exercise(cell.id) if cell.kind is CellKind.EXERCISE else None
    button = "Check" if exercise else "Run"
    _press(section, button)
    status = _wait_done(section, limit)
    shown = section.locator(".cell-output").evaluate(_SHOWN)
    run = CellRun(step.number, cell, status, shown, records.get(cell.id))
    if cell.raises:
        if status != f"Raised {cell.raises}, as expected":
            run.problems.append(f"expected to raise {cell.raises}; the cell says {status!r}")
        return run
    if exercise is None and not status.startswith("Done in"):
        run.problems.append(f"did not run cleanly: {status!r} {shown.get('error', '')}")
    if exercise is not None and not status.startswith("Not yet"):
        run.problems.append(f"Check on the starter code should fail; the cell says {status!r}")
    if run.recorded is None:
        run.problems.append("no recorded output: run `promptdojo check --record`")
    elif _comparable(shown) != _expected(run.recorded):
        run.problems.append(
            f"output differs from its record:\n  shown:    {_comparable(shown)!r:.600}\n"
            f"  recorded: {_expected(run.recorded)!r:.600}"
        )
    if exercise is not None and exercise.solution is not None:
        _replace_code(page, section, exercise.solution.code)
        _press(section, "Check")
        solved = _wait_done(section, limit)
        if solved != "✓ Solved":
            run.problems.append(f"Check on the solution should pass; the cell says {solved!r}")
    return run


def _open(page: Page, base_url: str, lesson: Lesson, number: int) -> None:
    page.goto(f"{base_url}/lessons/{lesson.id}/{number}")
    wait_ready(page)
    page.evaluate(_RECORD_RUNS)


def _run_step(page: Page, lesson: Lesson, step: Step) -> list[CellRun]:
    expect(page.get_by_role("heading", level=1)).to_have_text(step.title)
    return [_run_cell(page, lesson, step, cell) for cell in step.cells]


def walk(page: Page, base_url: str, lesson: Lesson) -> list[CellRun]:
    """Open step 1, then for each step run every visible cell in order and go to the next."""
    _open(page, base_url, lesson, 1)
    runs = []
    for step in lesson.steps:
        runs += _run_step(page, lesson, step)
        if step.number < len(lesson.steps):
            page.get_by_role("link", name="Next step").click()
    return runs


def walk_step(page: Page, base_url: str, lesson: Lesson, number: int) -> list[CellRun]:
    """Open step ``number`` itself (a first visit there) and run every visible cell in order."""
    _open(page, base_url, lesson, number)
    return _run_step(page, lesson, lesson.steps[number - 1])


def kernel_runs(page: Page) -> list[dict]:
    """Every kernel run of the walk: ``{cellId, ms, ok}``, set-up cells and checks included."""
    return page.evaluate("() => window.promptdojoKernel.__walkRuns")
