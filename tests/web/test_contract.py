"""The seams between Python and the page, written once each side and held to the same keys:
``promptdojo/web/contract.py`` and ``kernel.py``/``ui.py`` against the JSDoc typedefs of
``static/js/shared/contract.js``, and both against what a rendered page really sends."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from promptdojo.kernel import MAX_CONTROL_VALUES, CellResult
from promptdojo.ui import MAX_TEXT, ControlRun, choice, collecting, slider, toggle
from promptdojo.web.contract import KernelConfig, SnapshotRef, StepData, early_files
from promptdojo.web.offline import CourseConfig
from tests.conftest import ROOT

CONTRACT = ROOT / "static" / "js" / "shared" / "contract.js"
#: The fields of a run result that the JavaScript layers add to Python's (contract.js says which).
ADDED_IN_JS = {"ms", "stopped", "setupFailures", "notStarted", "expected"}


def typedef(name: str) -> set[str]:
    """The property names of the typedef ``name`` in contract.js."""
    text = CONTRACT.read_text(encoding="utf-8")
    start = text.index(f"@typedef {{object}} {name}\n")
    block = text[start : text.index("*/", start)]
    return set(re.findall(r"@property \{[^}]*(?:\}[^}]*)*?\} \[?(\w+)\]?", block))


def page(client: TestClient, url: str) -> tuple[dict, dict]:
    """The kernel config and the step data of the step page at ``url``."""
    text = client.get(url, headers={"accept": "text/html"}).text
    raw = re.search(r'<meta name="promptdojo-kernel" content="([^"]*)">', text)
    assert raw is not None
    config = json.loads(raw.group(1).replace("&#34;", '"').replace("&amp;", "&"))
    data = json.loads(re.search(r'id="step-data">(.*?)</script>', text).group(1))
    return config, data


def test_the_typedef_reader_reads_every_property() -> None:
    # Guards the reader itself: a typedef it misread would make every test below pass or fail
    # for nothing.
    assert {"workerUrl", "snapshot", "twins", "htmlFrameHead"} <= typedef("KernelConfig")
    assert {"error_line", "controls", "setupFailures"} <= typedef("RunResult")
    with pytest.raises(ValueError, match="substring not found"):
        typedef("NoSuchType")


def test_kernel_config_and_step_data_have_the_same_keys_in_python_js_and_the_page(
    client: TestClient,
) -> None:
    config, data = page(client, "/lessons/hello/1")
    assert set(KernelConfig.__annotations__) == typedef("KernelConfig") == set(config)
    assert set(StepData.__annotations__) == typedef("StepData") == set(data)


def test_the_page_gets_pythons_limits_through_the_config(client: TestClient) -> None:
    config, _ = page(client, "/lessons/hello/1")
    assert (config["maxControlValues"], config["maxControlText"]) == (MAX_CONTROL_VALUES, MAX_TEXT)


def test_every_config_key_the_scripts_read_is_one_the_page_sends() -> None:
    """A key renamed on one side only would read as undefined in the browser: no test would
    see it fail until a learner did."""
    keys = set(KernelConfig.__annotations__)
    read: dict[str, set[str]] = {}
    for path in sorted((ROOT / "static" / "js").rglob("*.js")):
        if path.name == "boot.js":  # its `config` is the boot's own options, not the page's
            continue
        for key in re.findall(r"\bconfig\??\.(\w+)", path.read_text(encoding="utf-8")):
            read.setdefault(key, set()).add(str(path.relative_to(ROOT)))
    assert len(read) > 15, read
    assert {key: files for key, files in read.items() if key not in keys} == {}


def test_a_run_result_is_pythons_fields_and_those_the_js_layers_add() -> None:
    python = set(CellResult(ok=True).to_dict())
    assert python <= typedef("RunResult")
    assert typedef("RunResult") - python == ADDED_IN_JS


def test_a_control_spec_names_every_key_the_controls_declare() -> None:
    run = ControlRun()
    with collecting(run):
        slider("t", 0.0, 2.0, value=1.0, step=0.1)
        slider("k", values=[1, 2, 4])
        choice("model", ["a", "b"])
        toggle("loud")
    declared = {key for spec in run.declared for key in spec}
    assert declared == typedef("ControlSpec")


def test_contract_js_is_a_module_of_the_shared_room() -> None:
    assert Path(CONTRACT).is_file()
    assert "export {};" in CONTRACT.read_text(encoding="utf-8")


def test_the_service_workers_course_has_the_same_keys_in_python_js_and_what_it_reads(
    client: TestClient,
) -> None:
    script = client.get("/sw.js").text
    first = script.splitlines()[0]
    assert first.startswith("self.promptdojoCourse = ")
    served = json.loads(first.removeprefix("self.promptdojoCourse = ").rstrip(";"))
    assert set(CourseConfig.__annotations__) == typedef("CourseConfig") == set(served)
    worker = (ROOT / "static" / "js" / "sw" / "sw.js").read_text(encoding="utf-8")
    read = set(re.findall(r"\bcourse\.(\w+)", worker))
    assert read
    assert read <= typedef("CourseConfig"), read


def test_the_early_files_are_the_boots_first_downloads_as_the_workers_ask_for_them() -> None:
    snapshot = SnapshotRef(
        url="/snapshot/s.bin", sha256="", size=1, stdlib="/snapshot/std.zip", packages=None
    )
    twins = {
        "/pyodide/pyodide.asm.wasm": ["/pyodide/pyodide.asm.wasm.zst", "zstd"],
        "/snapshot/s.bin": ["/snapshot/s.bin.zst", "zstd"],
        "/snapshot/std.zip": ["/snapshot/std.zip.gz", "gzip"],
    }
    # A gzip twin is left out: a browser without DecompressionStream asks for the file itself.
    assert early_files("/pyodide/", snapshot, twins) == [
        "/pyodide/pyodide.asm.wasm.zst",
        "/snapshot/s.bin.zst",
    ]
    # Served by promptdojo serve, which has no twins: the files themselves.
    assert early_files("/pyodide/", snapshot, {}) == [
        "/pyodide/pyodide.asm.wasm",
        "/snapshot/std.zip",
        "/snapshot/s.bin",
    ]
    assert early_files("/pyodide/", None, {}) == ["/pyodide/pyodide.asm.wasm"]
