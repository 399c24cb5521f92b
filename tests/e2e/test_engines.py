"""The same learner's walk in Chromium, Firefox and WebKit (with and without shared memory).

Each engine opens one browser for the whole walk (tests/e2e/engines.py): Python ready from the
snapshot; every cell of the real lesson's steps 1 and 7 showing its recorded output (Pyodide
0.29.0 with numpy), Check on their exercises; next-step navigation keeping Python; Stop on
``while True: pass``, and on a run queued behind it; a later cell run first running the cells
above it; an edit surviving a reload; the export behind ``python -m http.server`` with its
service worker. Every driver command has a time limit, and one that misses it fails naming the
walk step. A missing engine is skipped with the reason, and fails under CI=true.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from promptdojo.course import load_lesson
from promptdojo.pyodide.release import Release
from tests.conftest import REAL_LESSONS
from tests.e2e.conftest import Server, start_server, stop_server
from tests.e2e.engines import (
    COMMAND_TIMEOUT_S,
    ENGINES,
    CommandTimeout,
    Engine,
    launch,
    missing,
    wait_for,
)
from tests.e2e.test_export import copy_lessons, export
from tests.e2e.test_stop import QUEUED_BEHIND_A_SPIN
from tests.e2e.walk import _SHOWN, _comparable, _expected
from tests.support.static_host import plain_server

LESSON = "decoding-kv-cache-quantization"
#: Seconds a cell may take in the walk on a busy machine.
CELL_TIMEOUT_S = 90


@pytest.fixture(scope="module", params=list(ENGINES))
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """One browser of each engine, shared by every step of its walk."""
    why = missing(request.param)
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(why + "; browser tests never skip under CI=true")
        pytest.skip(why)
    # Chromium's walk opens its pages in the session's Playwright browser (the suite's own).
    session = request.getfixturevalue("browser") if request.param == "chromium" else None
    browser = launch(request.param, session)
    yield browser
    browser.close()


@pytest.fixture(autouse=True)
def walk_step_name(request: pytest.FixtureRequest) -> None:
    """Name the walk step in the messages of the engine's commands that time out."""
    if "engine" in request.fixturenames:
        request.getfixturevalue("engine").step = request.node.originalname.removeprefix("test_")


@pytest.fixture(scope="module")
def fixture_server(
    fixture_lessons: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    server = start_server(fixture_lessons, tmp_path_factory.mktemp("engines-fixtures"))
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def site(numpy_release: Release, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export of two fixture lessons, below /course/."""
    tmp = tmp_path_factory.mktemp("engines-export")
    lessons = copy_lessons(tmp / "lessons", ("hello", "runaway"))
    export(lessons, tmp / "site" / "course", numpy_release.path, tmp / "no-cache")
    return tmp / "site"


def js(value: object) -> str:
    return json.dumps(value)


def open_ready(engine: Engine, url: str, then: Callable[[], object] | None = None) -> dict:
    """Open ``url``, wait until Python is ready (or failed); return the ready phase's detail.
    ``then`` runs once the page has loaded, before the wait (a benchmark's recorder, say)."""
    engine.goto(url)
    if then is not None:
        then()
    phase = wait_for(
        engine,
        "['ready', 'error'].includes(document.querySelector('.kernel-status')?.dataset.phase)"
        " && document.querySelector('.kernel-status').dataset.phase",
    )
    status = engine.evaluate("document.querySelector('.kernel-status').textContent")
    assert phase == "ready", f"{engine.name}: {status}"
    return engine.evaluate(
        "window.promptdojoKernel.phases.filter(([p]) => p === 'ready').at(-1)[1]"
    )


def press(engine: Engine, cell_id: str, name: str) -> None:
    """Press a cell's button (Run, Check, Stop) as a click on it."""
    pressed = engine.evaluate(
        f"""(() => {{
          const cell = document.getElementById({js("cell-" + cell_id)});
          const button = [...(cell?.querySelectorAll("button") ?? [])]
            .find((b) => b.firstChild?.textContent.trim() === {js(name)} && !b.hidden);
          if (!button) return false;
          button.click();
          return true;
        }})()"""
    )
    assert pressed, f"{engine.name}: no {name} button in cell {cell_id}"


def cell_status(engine: Engine, cell_id: str) -> str:
    return engine.evaluate(
        f"document.querySelector({js(f'#cell-{cell_id} .cell-status')})?.textContent ?? ''"
    )


def wait_done(engine: Engine, cell_id: str, timeout_s: float = CELL_TIMEOUT_S) -> str:
    """Wait until the cell ended and its pictures decoded; return its status line."""
    return wait_for(
        engine,
        f"""(() => {{
          const cell = document.getElementById({js("cell-" + cell_id)});
          const status = cell.querySelector(".cell-status").textContent;
          if (!status || status === "Running…") return false;
          const pictures = [...cell.querySelectorAll(".cell-output img")];
          return pictures.every((img) => img.complete) && status;
        }})()""",
        timeout_s,
    )


def walk_step(engine: Engine, number: int) -> list[str]:
    """Run (or Check) every cell of step ``number`` in order; return what differed."""
    lesson = load_lesson(REAL_LESSONS / LESSON)
    step = lesson.steps[number - 1]
    from promptdojo.course.records import load_records

    records = load_records(step)
    problems = []
    for cell in step.cells:
        exercise = step.exercise(cell.id) is not None
        press(engine, cell.id, "Check" if exercise else "Run")
        status = wait_done(engine, cell.id)
        shown = engine.evaluate(
            f"({_SHOWN})(document.querySelector({js(f'#cell-{cell.id} .cell-output')}))"
        )
        if exercise and not status.startswith("Not yet"):
            problems.append(f"{cell.id}: Check on the starter says {status!r}")
        if not exercise and not status.startswith("Done in"):
            problems.append(f"{cell.id}: {status!r} {shown.get('error', '')}")
        if _comparable(shown) != _expected(records[cell.id]):
            problems.append(
                f"{cell.id}: output differs from its record: {_comparable(shown)!r:.300}"
            )
    return problems


def test_ready_from_the_snapshot(engine: Engine, numpy_lessons_server: Server) -> None:
    detail = open_ready(engine, f"{numpy_lessons_server.url}/lessons/{LESSON}/1")
    assert detail.get("restored") is True, detail
    assert "numpy" in detail.get("loaded", []), detail
    ready_ms = engine.evaluate("performance.getEntriesByName('pd:ready')[0]?.startTime")
    print(f"\n{engine.name} {engine.version}: ready in {ready_ms / 1000:.2f} s")
    shared = engine.evaluate("typeof SharedArrayBuffer === 'function' && crossOriginIsolated")
    note = engine.evaluate("document.querySelector('.kernel-status').textContent")
    assert shared is (engine.name != "webkit-no-sab")
    # Without shared memory the page says so, once, on the ready line.
    assert ("Stop restarts Python" in note) is (not shared), note


def test_every_cell_of_step_1_shows_its_record(
    engine: Engine, numpy_lessons_server: Server
) -> None:
    assert walk_step(engine, 1) == []


def test_next_step_keeps_python(engine: Engine, numpy_lessons_server: Server) -> None:
    engine.evaluate("(window.__walkWorker = window.promptdojoKernel.worker, true)")
    engine.evaluate(
        "(document.querySelector('a[rel=next]') ?? [...document.querySelectorAll('a')]"
        ".find((a) => a.textContent.includes('Next step'))).click()"
    )
    wait_for(engine, "location.pathname.endsWith('/2')")
    title = load_lesson(REAL_LESSONS / LESSON).steps[1].title
    wait_for(engine, f"document.querySelector('h1')?.textContent.trim() === {js(title)}")
    assert engine.evaluate("window.promptdojoKernel.worker === window.__walkWorker")


def test_every_cell_of_step_7_shows_its_record(
    engine: Engine, numpy_lessons_server: Server
) -> None:
    open_ready(engine, f"{numpy_lessons_server.url}/lessons/{LESSON}/7")
    assert walk_step(engine, 7) == []


def test_stop_ends_an_endless_loop(engine: Engine, fixture_server: Server) -> None:
    open_ready(engine, f"{fixture_server.url}/lessons/runaway/1")
    press(engine, "state", "Run")
    wait_done(engine, "state")
    press(engine, "spin", "Run")
    wait_for(
        engine,
        f"document.querySelector({js('#cell-spin .cell-status')}).textContent === 'Running…'",
    )
    time.sleep(0.3)
    press(engine, "spin", "Stop")
    status = wait_done(engine, "spin", 30)
    if engine.name == "webkit-no-sab":
        assert status.startswith("Python was restarted (you pressed Stop, and this page cannot"), (
            status
        )
    else:
        assert status == "Stopped: you pressed Stop", status
    press(engine, "after", "Run")
    wait_done(engine, "after")
    output = engine.evaluate("document.querySelector('#cell-after .cell-output').textContent")
    assert output == "42"


def test_stop_cancels_a_run_queued_behind_another(engine: Engine, fixture_server: Server) -> None:
    # Whether a cancel that reached the worker while a run held it is read before the run queued
    # ahead of it starts is each engine's ordering of the worker's messages (test_stop.py).
    open_ready(engine, f"{fixture_server.url}/lessons/runaway/1")
    done = engine.evaluate(QUEUED_BEHIND_A_SPIN)
    assert done["cancelled"] is True, done
    assert done["out"] == "", done
    if engine.name == "webkit-no-sab":
        # No interrupt without shared memory: stopping the spin replaces the worker.
        assert done["first"] == done["second"] == "KernelRestarted", done
    else:
        assert done["first"] == done["second"] == "KeyboardInterrupt", done


def test_running_a_later_cell_first_runs_the_cells_above(
    engine: Engine, fixture_server: Server
) -> None:
    open_ready(engine, f"{fixture_server.url}/lessons/runtime/1")
    press(engine, "three", "Run")
    assert wait_done(engine, "three").startswith("Done in")
    shown = engine.evaluate(
        "['one', 'two', 'three'].map((id) => [document.querySelector(`#cell-${id} .cell-status`)"
        ".textContent.startsWith('Done in'), document.querySelector(`#cell-${id} .cell-output`)"
        ".textContent])"
    )
    assert shown == [[True, ""], [True, "2"], [True, "20"]]
    note = engine.evaluate("document.querySelector('#cell-three .order-note')?.textContent")
    assert note == "Ran 2 cells above first (“one”, “two”): not yet run in this Python."


def test_an_edit_survives_a_reload(engine: Engine, fixture_server: Server) -> None:
    engine.goto(f"{fixture_server.url}/lessons/runtime/1")
    wait_for(engine, "document.querySelector('#cell-one .cm-content')")
    engine.evaluate(
        """(() => {
          const content = document.querySelector("#cell-one .cm-content");
          content.focus();
          document.execCommand("selectAll");
          return document.execCommand("insertText", false, "counter = 100");
        })()"""
    )
    wait_for(engine, "localStorage.getItem('promptdojo:v1:edit:runtime:1:one')?.includes('100')")
    engine.reload()
    text = wait_for(engine, "document.querySelector('#cell-one .cm-content')?.textContent")
    assert text == "counter = 100"


def test_the_export_behind_http_server_with_its_service_worker(engine: Engine, site: Path) -> None:
    with plain_server(site) as url:
        detail = open_ready(engine, url + "/course/lessons/runaway/1/")
        assert engine.evaluate("Boolean(navigator.serviceWorker.controller)")
        assert engine.evaluate("crossOriginIsolated") is True
        assert detail.get("restored") is True, detail
        press(engine, "state", "Run")
        assert wait_done(engine, "state").startswith("Done in")
        press(engine, "after", "Run")
        wait_done(engine, "after")
        assert (
            engine.evaluate("document.querySelector('#cell-after .cell-output').textContent")
            == "42"
        )


def test_a_command_that_never_answers_fails_naming_the_step(
    engine: Engine, fixture_server: Server
) -> None:
    engine.goto(f"{fixture_server.url}/lessons/hello/1")
    engine.page_timeout_s = 1
    try:
        with pytest.raises(CommandTimeout, match="walk step 'a_command_that_never_answers"):
            engine.evaluate("new Promise(() => {})")
    finally:
        engine.page_timeout_s = COMMAND_TIMEOUT_S
    assert engine.evaluate("1 + 1") == 2
