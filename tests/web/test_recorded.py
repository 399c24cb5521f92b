"""Recorded outputs on the page: errors shown as learners see them, stale records marked."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.kernel import OUTPUT_CAP
from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings
from tests.conftest import FIXTURE_LESSONS, ROOT

HTML = {"accept": "text/html"}


def _cell(page: str, cell_id: str) -> str:
    start = page.index(f'id="cell-{cell_id}"')
    return page[start : page.index("</section>", start)]


def test_a_cell_that_raises_on_purpose_shows_its_recorded_error(client: TestClient) -> None:
    oops = _cell(client.get("/lessons/hello/3", headers=HTML).text, "oops")
    assert "recorded output" in oops
    assert re.search(
        r'<pre class="error">Traceback \(most recent call last\):\n'
        r"  File &#34;&lt;cell oops&gt;&#34;, line 1, in &lt;module&gt;\n"
        r"    {}\[&#34;missing&#34;\]\n    ~~\^+\n"
        r"KeyError: &#39;missing&#39;\n</pre>",
        oops,
    ), oops


def test_an_empty_record_shows_no_empty_label(client: TestClient) -> None:
    double = _cell(client.get("/lessons/hello/3", headers=HTML).text, "double")
    assert "recorded output" not in double


def test_a_record_of_older_code_is_marked_stale(fixture_lessons: Path, tmp_path: Path) -> None:
    lessons = tmp_path / "lessons"
    shutil.copytree(fixture_lessons / "hello", lessons / "hello")
    step = lessons / "hello" / "01-where-am-i.md"
    step.write_text(step.read_text().replace("answer = 6 * 7", "answer = 6 * 8"))
    client = TestClient(create_app(Settings(lessons_dir=lessons)))
    page = client.get("/lessons/hello/1", headers=HTML).text
    assert "recorded for an earlier version of this cell" in _cell(page, "cell-2")
    assert "recorded for an earlier version" not in _cell(page, "cell-1")


def test_the_setup_code_is_there_to_expand_read_only_and_collapsed(client: TestClient) -> None:
    page = client.get("/lessons/hello/3", headers=HTML).text
    details = page[page.index('<details class="setup-code">') : page.index("</details>")]
    assert '<details class="setup-code">' in page, "collapsed: no open attribute"
    assert "Setup code this step runs first (1 hidden cell)" in details
    assert "<code>greeting = &#34;hello&#34;</code>" in details
    assert "data-editable" not in details, "shown as text, never as an editor"
    first = client.get("/lessons/hello/1", headers=HTML).text
    assert "setup-code" not in first, "a step without setup shows no expander"


def test_the_lesson_seed_runs_before_the_steps_setup_in_the_browser(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    import json
    import random

    from promptdojo.kernel import Kernel

    def step_data(seed_line: str) -> dict:
        lessons = tmp_path / seed_line.replace(" ", "").replace(":", "") / "lessons"
        shutil.copytree(fixture_lessons / "hello", lessons / "hello")
        yaml = lessons / "hello" / "lesson.yaml"
        yaml.write_text(yaml.read_text().replace("seed: 0\n", seed_line))
        page = TestClient(create_app(Settings(lessons_dir=lessons))).get(
            "/lessons/hello/3", headers=HTML
        )
        start = page.text.index('<script type="application/json" id="step-data">') + 47
        return json.loads(page.text[start : page.text.index("</script>", start)])

    seeded = step_data("seed: 7\n")
    assert [c["id"] for c in seeded["setup"]] == ["lesson-seed", "cell-1"]
    kernel = Kernel()
    assert kernel.run(seeded["setup"][0]["code"], key="s").ok
    assert kernel.run("import random\nrandom.random()", key="s").value["text/plain"] == repr(
        random.Random(7).random()
    )
    assert "_seed" not in kernel.namespace("s"), "the seeding leaves no name behind"
    fresh = step_data("")
    assert [c["id"] for c in fresh["setup"]] == ["cell-1"], "no seed: fresh numbers every run"


def test_a_record_over_the_output_cap_is_cut_on_the_page(
    fixture_lessons: Path, tmp_path: Path
) -> None:
    # A record written by hand, or by a version of check without the cap: 1 MB of stdout.
    lessons = tmp_path / "lessons"
    shutil.copytree(fixture_lessons / "hello", lessons / "hello")
    record = lessons / "hello" / "recorded" / "01-where-am-i.json"
    data = json.loads(record.read_text())
    cell = next(iter(data))
    data[cell] = {**data[cell], "stdout": "x" * 1_000_000, "value": {"text/html": "<b>" * 10**5}}
    record.write_text(json.dumps(data))
    client = TestClient(create_app(Settings(lessons_dir=lessons)))
    page = client.get("/lessons/hello/1", headers=HTML).text
    assert "x" * OUTPUT_CAP in page
    assert "x" * (OUTPUT_CAP + 1) not in page
    assert len(page) < 2 * OUTPUT_CAP
    assert "Output truncated: a cell shows at most 100,000 characters." in _cell(page, cell)


def test_the_page_passes_the_output_cap_and_the_worker_holds_no_copy(client: TestClient) -> None:
    page = client.get("/lessons/hello/1", headers=HTML).text
    raw = re.search(r'<meta name="promptdojo-kernel" content="([^"]*)">', page)
    assert raw is not None
    config = json.loads(raw.group(1).replace("&#34;", '"').replace("&amp;", "&"))
    assert config["outputCap"] == OUTPUT_CAP
    worker = (ROOT / "static" / "js" / "kernel" / "worker.js").read_text()
    assert str(OUTPUT_CAP) not in worker.replace("_", "")
    assert "config.outputCap" in worker


@pytest.mark.parametrize(
    "text",
    ["[]\n", '{"cell-1": {"stdout": "x", "value": "42"}}', '{"cell-1": []}', "<<<<<<< HEAD\n{}"],
)
def test_a_record_in_the_wrong_shape_leaves_the_page_whole(
    fixture_lessons: Path, tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    lessons = tmp_path / "lessons"
    shutil.copytree(fixture_lessons / "hello", lessons / "hello")
    record = lessons / "hello" / "recorded" / "01-where-am-i.json"
    record.write_text(text)
    client = TestClient(create_app(Settings(lessons_dir=lessons)))
    response = client.get("/lessons/hello/1", headers=HTML)
    assert response.status_code == 200
    assert "recorded output" not in _cell(response.text, "cell-1")  # as if none was recorded
    assert f"recorded outputs left out: {record}:1: " in caplog.text
    # The other steps keep theirs.
    assert "recorded output" in _cell(client.get("/lessons/hello/3", headers=HTML).text, "oops")


def test_a_record_made_before_a_cell_above_changed_is_marked(tmp_path: Path) -> None:
    from promptdojo.checking.orchestrator import check
    from promptdojo.checking.record import write_records

    lessons = tmp_path / "lessons"
    shutil.copytree(FIXTURE_LESSONS / "hello", lessons / "hello")
    step = lessons / "hello" / "01-where-am-i.md"
    write_records(check([step], jobs=1))
    step.write_text(step.read_text().replace("import sys\n", "import sys\n\nanswer = 0\n"))
    client = TestClient(create_app(Settings(lessons_dir=lessons)))
    page = client.get("/lessons/hello/1", headers=HTML).text
    assert "(recorded for an earlier version of this cell)" in _cell(page, "cell-1")
    assert "(recorded before a cell above it changed)" in _cell(page, "cell-2")
