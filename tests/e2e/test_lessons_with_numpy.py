"""Every cell of every shipped lesson, run where learners run it: Chromium, Pyodide with numpy.

The server serves a real Pyodide 0.29.0 release with its official numpy build (``--pyodide-dir``,
an older release layout). The walk presses Run on every cell and Check on every exercise, as a
learner would; what each cell shows must equal its recorded output, and every exercise's Check
must fail on the starter and pass on the solution.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from promptdojo.course import discover, load_lesson
from tests.conftest import REAL_LESSONS
from tests.e2e.conftest import (
    READY,
    Server,
    click_run,
    fresh_page,
    run,
    run_code,
    start_server,
    stop_server,
    wait_ready,
)
from tests.e2e.test_stop import WORKER_SCRIPT
from tests.e2e.walk import kernel_runs, walk, walk_step

LESSONS = [folder.name for folder in discover(REAL_LESSONS)]
LESSON_ONE = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization").steps[0]


def warmed_up(page: Page) -> str:
    """The modules whose warm-up has run in the page's Python, once there is one (within 60 s).

    The worker runs the warm-ups once it has run nothing for half a second: the probe leaves it
    a second between its runs."""
    probe = "from promptdojo.kernel_warm_up import _WARMED\nprint(sorted(_WARMED))"
    deadline = time.monotonic() + 60
    while (warmed := run_code(page, probe).strip()) == "[]" and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
    return warmed


def test_a_step_opened_on_the_tiny_model_warms_it_unseen_and_keeps_its_records(
    page: Page, numpy_lessons_server: Server, real_lessons: Path
) -> None:
    """Step 2 imports the tiny model: after "ready", its first forward pass runs unseen (the
    browser compiles its numpy loops while the learner reads), and leaves nothing behind: every
    cell, seeded sampling included, still shows its recorded output."""
    lesson = load_lesson(real_lessons / "decoding-kv-cache-quantization")
    runs = walk_step(page, numpy_lessons_server.url, lesson, 2)
    problems = [f"{run.where}: {problem}" for run in runs for problem in run.problems]
    assert not problems, "\n".join(problems)
    assert warmed_up(page) == "['promptdojo.tinylm']"


def test_the_other_steps_modules_are_warmed_after_ready_for_a_step_reached_in_place(
    browser: Browser, numpy_lessons_server: Server
) -> None:
    """Step 1 does not load the tiny model, step 2 does: a little after "ready", in a turn of
    its own, the worker runs the tiny model's warm-up too, so that step 2 reached in place pays
    no first-call compiling either. (The walks below check that it changes no output.)"""
    url = f"{numpy_lessons_server.url}/lessons/decoding-kv-cache-quantization/1"
    page = fresh_page(browser, url)
    try:
        assert warmed_up(page) == "['promptdojo.tinylm']"
    finally:
        page.context.close()


#: Six runs sent together, each listing the learner library's modules then loaded.
RUNS_TOGETHER = """(() => {
  const kernel = window.promptdojoKernel;
  const code = "import sys\\nsorted(m for m in sys.modules if m.startswith('promptdojo.'))";
  const run = (i) => kernel.run(code, { key: "together", cellId: `r${i}` });
  const runs = [0, 1, 2, 3, 4, 5].map(run);
  window.together = Promise.all(runs).then((done) => done.map((r) => r.value["text/plain"]));
  return kernel.ready;
})()"""


@pytest.fixture(scope="module")
def plain_snapshot_server(
    real_lessons: Path, numpy_release: object, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The real lessons with numpy, restored from the snapshot without it
    (``--no-snapshot-packages``): numpy is installed and imported after the restore, and the
    other steps' modules after "ready"."""
    srv = start_server(
        real_lessons,
        tmp_path_factory.mktemp("plain-snapshot"),
        "--pyodide-dir",
        str(numpy_release.path),
        "--offline",
        "--no-snapshot-packages",
    )
    yield srv
    stop_server(srv)


def test_runs_sent_before_ready_go_before_the_other_steps_imports(
    browser: Browser, plain_snapshot_server: Server
) -> None:
    """From "ready" on, the worker imports the other steps' modules (the tiny model's, step
    2's) one per turn; runs waiting to start go first. Sent while Python starts, they all run
    before any of those imports, with nothing imported between two of them (which would make a
    learner's chain of cells wait). (A snapshot with numpy holds every module of the library:
    this is the page restored from the one without.)"""
    page = browser.new_context().new_page()
    try:
        held: list[Route] = []
        page.route(WORKER_SCRIPT, lambda route: held.append(route))
        page.goto(f"{plain_snapshot_server.url}/lessons/decoding-kv-cache-quantization/1")
        expect(page.locator(".kernel-status")).to_have_attribute("data-phase", "loading")
        assert page.evaluate(RUNS_TOGETHER) is False  # sent before Python could be ready
        deadline = time.monotonic() + 60
        while not held and time.monotonic() < deadline:
            page.wait_for_timeout(20)
        assert held, "the page never asked for the kernel worker's script"
        for route in held:
            route.continue_()
        seen = page.evaluate("window.together")
        assert page.evaluate(READY)["inSnapshot"] == [], page.evaluate(READY)
        assert "numpy" in page.evaluate(READY)["importedAfterRestore"]
        assert len(set(seen)) == 1, "\n".join(seen)
        assert "promptdojo.decoding" in seen[0], seen[0]  # the step's own imports, at the boot
        assert "promptdojo.tinylm" not in seen[0], seen[0]
        # The other steps' imports went on once the runs were answered.
        assert warmed_up(page) == "['promptdojo.tinylm']"
    finally:
        page.context.close()


@pytest.mark.parametrize("lesson_id", LESSONS)
def test_every_cell_shows_its_recorded_output_and_every_exercise_checks(
    page: Page, numpy_lessons_server: Server, real_lessons: Path, lesson_id: str
) -> None:
    lesson = load_lesson(real_lessons / lesson_id)
    runs = walk(page, numpy_lessons_server.url, lesson)
    # The release with numpy was the one that ran, not the built-in core without it.
    expect(page.locator(".kernel-status")).to_have_text("Python: ready")
    assert page.evaluate("window.promptdojoKernel.config.pyodideUrl") == "/pyodide/0.29.0/"
    assert len(runs) == sum(len(step.cells) for step in lesson.steps)
    problems = [f"{run.where}: {problem}" for run in runs for problem in run.problems]
    assert not problems, "\n".join(problems)
    # Every set-up cell, cell, check and solution ran in the worker, and all but the starters'
    # checks (which must fail) succeeded.
    ran = {entry["cellId"] for entry in kernel_runs(page)}
    for step in lesson.steps:
        assert {c.id for c in (*step.setup, *step.cells)} <= ran


def test_the_lesson_restores_a_snapshot_and_numpy_randomness_is_fresh(
    browser: Browser, numpy_lessons_server: Server
) -> None:
    """Pages of the 0.29.0 release restore its snapshot and install numpy from the wheel the page
    unpacked and compiled meanwhile (wheels.js); each load draws fresh entropy, and the lesson's
    seed, applied as soon as Python is ready, gives numpy's global generator the check's numbers."""
    code = (
        "import numpy as np\n"
        "print(np.random.default_rng().integers(2**62), np.random.SeedSequence().entropy,"
        " np.random.default_rng(0).integers(1000), np.random.rand())"
    )
    printed = []
    for _ in range(2):
        page = fresh_page(browser, f"{numpy_lessons_server.url}/lessons/{LESSONS[0]}/1")
        ready = page.evaluate(READY)
        assert ready["restored"] is True, ready
        assert ready["fromWheels"] is True, ready
        assert ready["downloadedIn"] == "download worker", ready
        assert "numpy" in ready["loaded"]
        printed.append(run_code(page, code).split())
        page.context.close()
    first, second = printed
    assert first[0] != second[0]
    assert first[1] != second[1]
    # Seeded: the value numpy gives for seed 0 anywhere; and the lesson's seed, queued at
    # "ready" before anything the learner (here, the test) runs, gives the same draw each load.
    assert first[2] == second[2] == "850"
    assert first[3] == second[3]


def test_the_temperature_exercise_is_a_prediction_its_slider_confirms(
    page: Page, numpy_lessons_server: Server
) -> None:
    page.goto(f"{numpy_lessons_server.url}/lessons/decoding-kv-cache-quantization/1")
    wait_ready(page)
    run(page, "cell-1")  # the step's first cell makes `logits` and `vocab`, as a learner runs it
    cell = page.locator("#cell-coldest")
    output = cell.locator(".cell-output > pre.stdout")
    status = cell.locator(".cell-status")
    slider = cell.get_by_role("slider", name="temperature")
    expect(slider).to_have_value("1")  # drawn before the cell first runs
    cell.get_by_role("button", name="Check").press("Enter")
    expect(status).to_contain_text("Not yet: at your predicted T=1.00, P('the') is 0.600")
    # The learner writes down a prediction, then moves the slider there to confirm it.
    code = cell.locator(".cm-content")
    code.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(
        next(c for c in LESSON_ONE.cells if c.id == "coldest").code.replace(
            "prediction = 1.0", "prediction = 0.36"
        )
    )
    cell.get_by_role("button", name="Check").press("Enter")
    expect(status).to_contain_text("Not yet: the slider is at T=1.00", timeout=30_000)
    slider.focus()
    for _ in range(64):  # 1.00 -> 0.36, a hundredth at a time
        page.keyboard.press("ArrowLeft")
    expect(output).to_contain_text("the slider is at T=0.36, where P('the') = 0.902")
    cell.get_by_role("button", name="Check").press("Enter")
    expect(status).to_have_text("✓ Solved", timeout=30_000)


def test_a_cell_pressed_first_runs_only_the_cells_above_it_needs(
    browser: Browser, numpy_lessons_server: Server
) -> None:
    """Step 7's ``size`` reads nothing the cells above it make (promptdojo.course.needs): pressed
    first on a fresh page, it runs alone, where it used to score four models first. Once the
    learner edits it, it may read anything, and every cell above runs first, as before."""
    page = fresh_page(browser, f"{numpy_lessons_server.url}/lessons/{LESSONS[0]}/7")
    size = click_run(page, "size")
    status = size.locator(".cell-status")
    expect(status).to_contain_text("Done in", timeout=60_000)
    expect(size.locator(".cell-output")).to_contain_text("an 8B model in fp16:")
    expect(page.locator("#cell-perplexity .cell-status")).to_have_text("")
    expect(size.locator(".order-note")).to_have_count(0)
    size.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type("print(sorted(results))")
    page.keyboard.press("Control+Enter")
    expect(size.locator(".cell-output")).to_have_text(
        "['NVFP4', 'Q4_0', 'Q8_0', 'fp32', 'int4-g32']\n", timeout=120_000
    )
    expect(size.locator(".order-note")).to_contain_text("Ran 5 cells above first")
    expect(page.locator("#cell-outputs .cell-status")).to_contain_text("Done in")
    page.context.close()


def test_a_call_on_a_name_no_call_changes_does_not_make_a_cell_wait(
    browser: Browser, numpy_lessons_server: Server
) -> None:
    """The lesson lists ``model`` and ``tok`` in ``unchanged_by_calls``: step 4's heatmap, pressed
    first on a fresh page, runs alone. Not ``same-tokens`` first, which only calls
    ``model.generate``, nor ``counters``, whose loop variables are its comprehensions' own, nor
    ``cell-3``, whose ``ids`` the heatmap binds itself before reading it. Without the key, it
    would run all three and two more."""
    page = fresh_page(browser, f"{numpy_lessons_server.url}/lessons/{LESSONS[0]}/4")
    heatmap = click_run(page, "heatmap")
    expect(heatmap.locator(".cell-status")).to_contain_text("Done in", timeout=60_000)
    expect(heatmap.locator(".cell-output")).not_to_be_empty()
    expect(heatmap.locator(".order-note")).to_have_count(0)
    for skipped in ("same-tokens", "cell-3", "counters"):
        expect(page.locator(f"#cell-{skipped} .cell-status")).to_have_text("")
    page.context.close()
