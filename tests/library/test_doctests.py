"""Every example in the learner library's docstrings runs and prints what it says."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "promptdojo.decoding",
    "promptdojo.decoding.sampling",
    "promptdojo.decoding.generation",
    "promptdojo.kvcache",
    "promptdojo.quantization",
    "promptdojo.quantization.uniform",
    "promptdojo.quantization.llamacpp",
    "promptdojo.quantization.metrics",
    "promptdojo.display",
    "promptdojo.display.charts",
    "promptdojo.display.memory",
    "promptdojo.display.serving",
    "promptdojo.kvmemory",
    "promptdojo.serving",
    "promptdojo.serving.blocks",
    "promptdojo.serving.hashing",
    "promptdojo.serving.manager",
    "promptdojo.serving.scheduler",
    "promptdojo.serving.sim",
    "promptdojo.serving.speculative",
    "promptdojo.tinylm.quant",
    "promptdojo.tinylm",
    "promptdojo.tinylm.model",
    "promptdojo.tinylm.ops",
    "promptdojo.tinylm.tokenizer",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
