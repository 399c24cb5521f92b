"""The learner library's own warm-ups (promptdojo.kernel_warm_up.warm_up_modules), which the page
runs before "ready" for the modules the opened step imports."""

from __future__ import annotations

import random
import sys
import types

import numpy as np
import pytest

import promptdojo.tinylm
from promptdojo import kernel_warm_up
from promptdojo.kernel import Kernel
from promptdojo.kernel_warm_up import HOOK, import_modules, warm_up_modules


@pytest.fixture(autouse=True)
def nothing_warmed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts in an interpreter where no warm-up has run."""
    monkeypatch.setattr(kernel_warm_up, "_WARMED", set())


def test_a_module_inside_a_package_uses_its_packages_warm_up_once() -> None:
    names = ["promptdojo.tinylm.model", "promptdojo.tinylm", "promptdojo.decoding", "json"]
    assert warm_up_modules(names) == ["promptdojo.tinylm"]
    assert Kernel().warm_up_modules(["promptdojo.tinylm.ops"]) == []  # warmed already
    assert warm_up_modules([]) == []


def test_the_tiny_models_warm_up_leaves_its_weights_as_they_were() -> None:
    text = "def add(a, b):\n    return a + b\n"
    before = promptdojo.tinylm.TinyLM.load().perplexity(text)
    getattr(promptdojo.tinylm, HOOK)()
    assert promptdojo.tinylm.TinyLM.load().perplexity(text) == before


def _module(monkeypatch: pytest.MonkeyPatch, name: str, hook: object) -> None:
    module = types.ModuleType(name)
    setattr(module, HOOK, hook)
    monkeypatch.setitem(sys.modules, name, module)


def test_a_warm_up_leaves_no_output_and_no_random_state(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def noisy() -> None:
        print("seen")
        print("heard", file=sys.stderr)
        random.seed(1)
        np.random.seed(1)
        random.random()
        np.random.rand()

    _module(monkeypatch, "noisy_lib", noisy)
    random.seed(5)
    np.random.seed(5)
    expected = (random.random(), np.random.rand())
    random.seed(5)
    np.random.seed(5)
    assert warm_up_modules(["noisy_lib"]) == ["noisy_lib"]
    assert capsys.readouterr() == ("", "")
    assert (random.random(), np.random.rand()) == expected


def test_a_warm_up_that_fails_is_skipped_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran = []

    def broken() -> None:
        raise RuntimeError("no weights here")

    _module(monkeypatch, "broken_lib", broken)
    _module(monkeypatch, "good_lib", lambda: ran.append("good"))
    _module(monkeypatch, "not_a_hook", "a string")
    names = ["broken_lib", "not_a_hook", "good_lib", "never_imported"]
    assert warm_up_modules(names) == ["good_lib"]
    assert warm_up_modules(names) == []  # each runs once, the failed one too
    assert ran == ["good"]


def test_the_imports_before_ready_keep_those_that_import_and_leave_out_those_that_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "promptdojo_broken_for_test", None)  # importing it raises
    names = ["json", "promptdojo_broken_for_test", "promptdojo_no_such_module", "promptdojo.ui"]
    assert import_modules(names) == ["json", "promptdojo.ui"]
    assert "promptdojo_no_such_module" not in sys.modules
    assert import_modules([]) == []
