"""The first lesson: seven complete steps, deterministic cells, and facts that are checked."""

from __future__ import annotations

import re

import numpy as np
import pytest

from promptdojo.checking.record import load_records
from promptdojo.course import load_lesson
from promptdojo.kvcache import MODELS, kv_bytes_per_token, kv_cache_bytes, paged_blocks
from promptdojo.quantization import model_size, quantize_q4_0, quantize_q8_0
from promptdojo.tinylm import CharTokenizer, TinyLM
from promptdojo.tinylm.model import HELDOUT
from tests.conftest import REAL_LESSONS

LESSON = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization")


def prose(number: int) -> str:
    return LESSON.steps[number - 1].path.read_text()


def recorded_stdout(number: int) -> list[str]:
    """What step ``number``'s cells printed. ``make test`` proves these records equal the live
    output in CPython, in Pyodide under Node and in Chromium, so the prose is held to them here
    without running the lesson a fourth time."""
    return [r["stdout"] for r in load_records(LESSON.steps[number - 1]).values()]


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


@pytest.mark.parametrize("step", LESSON.steps, ids=lambda s: s.path.name)
def test_every_step_draws_a_picture(step) -> None:
    values = [r["value"] for r in load_records(step).values()]
    assert any("image/svg+xml" in value for value in values), "a picture from display"


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
    ratios = next(out for out in recorded_stdout(1) if "'the' vs 'a'" in out)
    assert "at T=1.0: 2.4 to 1" in ratios
    assert "at T=0.2: 80 to 1" in ratios
    assert "2.4 times as likely" in prose(1)
    assert "2.4⁵ is about 80" in prose(1)
    draws = next(out for out in recorded_stdout(1) if "20 draws" in out)
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


def test_step_four_counts_the_positions_it_names() -> None:
    assert "8,256 positions\nfor 128 characters" in prose(4)
    assert 'model.generation_cost("x", 128, use_cache=False)' in prose(4)
    model = TinyLM.load()
    per_position = model.forward_cost(1).projection_macs  # the weights' work for one position
    assert model.generation_cost("x", 128, use_cache=False).projection_macs == 8_256 * per_position
    assert model.generation_cost("x", 128).projection_macs == 128 * per_position


FORMATS = ["fp32", "int8", "Q8_0", "int4-g32", "Q4_0", "int4"]


@pytest.fixture(scope="module")
def heldout_nll() -> dict[str, np.ndarray]:
    """Per-character negative log-likelihood of the whole held-out text, for every format."""
    model = TinyLM.load()
    text = HELDOUT.read_text(encoding="utf-8")
    return {
        name: (model if name == "fp32" else model.quantized(name)).token_nll(text)
        for name in FORMATS
    }


def changes(nll: dict[str, np.ndarray], index: np.ndarray) -> dict[str, float]:
    """Perplexity change in percent against fp32, on the predictions at ``index``."""
    ppl = {name: float(np.exp(nll[name][index].mean())) for name in FORMATS}
    return {name: 100 * (ppl[name] / ppl["fp32"] - 1) for name in FORMATS[1:]}


def margin(change: dict[str, float]) -> float:
    """How far (in percentage points) the lesson's order holds: 8-bit < 4-bit g32 < int4."""
    eight = max(change["int8"], change["Q8_0"])
    four = (change["int4-g32"], change["Q4_0"])
    return min(min(four) - eight, change["int4"] - max(four))


def test_step_seven_sample_is_1024_predictions_spread_over_the_text() -> None:
    text, model = HELDOUT.read_text(encoding="utf-8"), TinyLM.load()
    assert len(text) == 16_384
    assert "16,384 characters long" in prose(7)
    assert "8 windows of 128 characters" in prose(7)
    assert "`n_windows=8`), 1,024 predicted characters" in prose(7)
    assert model.config.context == 128
    assert model.token_nll(text, n_windows=8).size == 1_024
    calls = prose(7).count(".perplexity(")
    assert calls == prose(7).count(".perplexity(heldout, n_windows=8)") == 3  # fp32, 8-bit, 4-bit


def test_step_seven_order_holds_on_its_sample_on_the_whole_text_and_on_other_samples(
    heldout_nll: dict[str, np.ndarray],
) -> None:
    windows = np.arange(127 * 128).reshape(127, 128)  # the 127 full windows of 128 predictions
    lesson = changes(heldout_nll, windows[::16][:8].ravel())  # what n_windows=8 picks
    # The lesson's own sample: 8-bit barely moves, 4-bit in groups of 32 noticeably, per tensor
    # most, and 2% separates the two groups (the exercise's threshold).
    assert max(abs(lesson["int8"]), abs(lesson["Q8_0"])) < 0.25, lesson
    assert min(lesson["int4-g32"], lesson["Q4_0"]) > 2.0, lesson
    assert lesson["int4"] > 3 * max(lesson["int4-g32"], lesson["Q4_0"]), lesson
    assert margin(lesson) > 2.0, lesson
    # The whole text gives the same order and the same formats pass at 2%.
    whole = changes(heldout_nll, np.arange(heldout_nll["fp32"].size))
    assert margin(whole) > 2.0, whole
    assert [s for s in FORMATS[1:] if whole[s] <= 2] == [s for s in FORMATS[1:] if lesson[s] <= 2]
    # Every other evenly spread sample of the same size (16 disjoint ones) keeps the order too.
    others = [changes(heldout_nll, windows[offset::16][:8].ravel()) for offset in range(1, 16)]
    assert min(margin(c) for c in others) > 0.25, [round(margin(c), 2) for c in others]


def test_step_seven_cells_compute_what_the_test_checks(heldout_nll: dict[str, np.ndarray]) -> None:
    model, text = TinyLM.load(), HELDOUT.read_text(encoding="utf-8")
    index = np.arange(127 * 128).reshape(127, 128)[::16].ravel()
    for name in ("fp32", "int4"):
        variant = model if name == "fp32" else model.quantized(name)
        expected = float(np.exp(heldout_nll[name][index].mean()))
        assert variant.perplexity(text, n_windows=8) == pytest.approx(expected, rel=1e-9)
