"""The first lesson: seven complete steps, deterministic cells, and facts that are checked."""

from __future__ import annotations

import re

import numpy as np
import pytest

from promptdojo.checking.steprun import Status, StepRunner
from promptdojo.course import load_lesson
from promptdojo.kvcache import MODELS, kv_bytes_per_token, kv_cache_bytes, paged_blocks
from promptdojo.quantization import model_size, quantize_q4_0, quantize_q8_0
from promptdojo.tinylm import CharTokenizer
from tests.conftest import REAL_LESSONS

LESSON = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization")


def prose(number: int) -> str:
    return LESSON.steps[number - 1].path.read_text()


def run(number: int):
    step = LESSON.steps[number - 1]
    return StepRunner(step, LESSON.time_limit).run()


def test_identity() -> None:
    assert LESSON.id == "decoding-kv-cache-quantization"
    assert LESSON.title == "Decoding, the KV cache, and quantization"
    assert LESSON.chapter == "ch 44 · CNNs, transformers, and useful LLM internals"
    assert len(LESSON.steps) == 7


@pytest.mark.parametrize("step", LESSON.steps, ids=lambda s: s.path.name)
def test_every_step_is_complete(step) -> None:
    assert any("promptdojo" in c.code for c in (*step.setup, *step.cells))
    assert any("promptdojo.display" in c.code for c in (*step.setup, *step.cells))
    assert step.exercises, "at least one exercise"
    for exercise in step.exercises:
        assert exercise.check is not None
        assert len(exercise.hints) >= 2, "hints are progressive"
        assert exercise.solution is not None


@pytest.mark.parametrize("number", range(1, 8))
def test_every_step_passes_draws_a_picture_and_is_deterministic(number: int) -> None:
    first, second = run(number), run(number)
    assert [o.status for o in first] == [Status.PASSED] * len(first), [
        (o.cell_id, o.message) for o in first if o.status is not Status.PASSED
    ]
    assert any("image/svg+xml" in o.output.value for o in first), "a picture from display"
    assert [o.output.to_dict() for o in first] == [o.output.to_dict() for o in second]


def test_step_one_keeps_the_seed_facts_and_pitfalls() -> None:
    text = prose(1)
    for fact in (
        "chapter 23",
        "chapter 13",
        "chapter 21",
        "temperature",
        "Top-k and top-p",
        "token 501",
        "tokens 1 to 500",
        "32-bit or 16-bit",
        "8-bit or\n4-bit",
        "twenty draws",
        "half a step",
    ):
        assert fact in text, fact
    pitfalls = text.split("## Where AI specifically gets this wrong")[1]
    assert pitfalls.count("- **") == 3
    for name in ("Temperature superstition", "max_tokens", "Quantizing without re-evaluating"):
        assert name in pitfalls
    assert "](" not in text, "chapter references stay plain text, not links"


def test_step_one_ratios_in_the_prose_come_from_its_cell() -> None:
    outcome = next(o for o in run(1) if "'the' vs 'a'" in o.output.stdout)
    assert "at T=1.0: 2.4 to 1" in outcome.output.stdout
    assert "at T=0.2: 80 to 1" in outcome.output.stdout
    assert "2.4 times as likely" in prose(1)
    assert "2.4⁵ is about 80" in prose(1)
    draws = next(o for o in run(1) if "20 draws" in o.output.stdout).output.stdout
    cold = re.search(r"T=0.2: 20 draws\s+\{'the': (\d+)", draws)
    assert cold is not None
    assert int(cold.group(1)) >= 18, "twenty draws at 0.2 are nearly all 'the'"


def test_cited_facts_in_the_prose() -> None:
    five, six, seven = prose(5), prose(6), prose(7)
    llama = MODELS["Llama-3-8B"]
    assert "Llama-3-8B keeps 128 KiB of cache per token in fp16" in five
    assert kv_bytes_per_token(llama) == 128 * 1024
    assert "a 32k-token conversation holds 4 GiB" in five
    assert kv_cache_bytes(llama, 32 * 1024) == 4 * 1024**3
    assert "an 8B model in fp16 take about 16 GB" in five
    assert model_size(8_000_000_000, "fp16") == 16_000_000_000
    assert "Llama-2-7B gives each of its 32 query heads" in five
    assert (MODELS["Llama-2-7B"].heads, MODELS["Llama-2-7B"].kv_heads) == (32, 32)
    assert "shares 8 key-value heads" in five
    assert (llama.heads, llama.kv_heads) == (32, 8)
    assert "(16 tokens by default)" in five
    assert paged_blocks(16).block_size == 16
    assert "34\nbytes, 8.5 bits per weight" in six
    assert "18 bytes, 4.5 bits per weight" in six
    x = np.linspace(-1, 1, 32)
    assert (quantize_q8_0(x).block_bytes, quantize_q8_0(x).bits_per_weight) == (34, 8.5)
    assert (quantize_q4_0(x).block_bytes, quantize_q4_0(x).bits_per_weight) == (18, 4.5)
    assert "127 for int8, 7 for int4" in six
    assert "this model's 96 characters" in seven
    assert len(CharTokenizer()) == 96
