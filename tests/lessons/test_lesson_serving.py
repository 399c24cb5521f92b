"""The serving lesson: six complete steps, links both ways with the first lesson, and every
number its prose states printed by one of its cells (its records, which ``make test`` proves
equal to the live output in CPython, in Pyodide under Node and in Chromium)."""

from __future__ import annotations

import re

import pytest

from promptdojo.checking.record import load_records
from promptdojo.course import load_lesson
from promptdojo.serving import BLOCK_SIZE, GPU, expected_tokens_per_pass
from tests.conftest import REAL_LESSONS

LESSON = load_lesson(REAL_LESSONS / "serving")
FIRST = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization")


def flat(number: int) -> str:
    return " ".join(LESSON.steps[number - 1].path.read_text().split())


def stdout(number: int, cell: str) -> str:
    return load_records(LESSON.steps[number - 1])[cell]["stdout"]


def test_identity() -> None:
    assert LESSON.id == "serving"
    assert LESSON.title == "Serving: batching, the paged KV cache and speculative decoding"
    assert LESSON.packages == FIRST.packages
    assert len(LESSON.steps) == 6


@pytest.mark.parametrize("step", LESSON.steps, ids=lambda s: s.path.name)
def test_every_step_is_complete_and_draws_a_picture(step) -> None:
    assert any("promptdojo.serving" in c.code for c in (*step.setup, *step.cells))
    assert step.exercises, "at least one exercise where the learner writes the mechanism"
    for exercise in step.exercises:
        assert exercise.check is not None
        assert len(exercise.hints) >= 2
        assert exercise.solution is not None
    values = [r["value"] for r in load_records(step).values()]
    assert any("image/svg+xml" in value for value in values), "a picture from display"


def test_the_lessons_link_to_each_other() -> None:
    first_five = " ".join(FIRST.steps[4].path.read_text().split())
    # Course links (lesson:ID/N), checked by validate and written below any base URL.
    assert f"](lesson:{LESSON.id})" in first_five
    assert f"](lesson:{FIRST.id}/5)" in flat(1)
    assert f"](lesson:{FIRST.id}/5)" in flat(6)


def test_every_cited_engine_file_is_named_by_path() -> None:
    text = " ".join(flat(n) for n in range(1, 7))
    for path in (
        "vllm/v1/core/kv_cache_manager.py",
        "vllm/v1/core/block_pool.py",
        "vllm/v1/core/kv_cache_utils.py",
        "vllm/v1/core/sched/scheduler.py",
        "vllm/engine/arg_utils.py",
        "vllm/v1/sample/rejection_sampler.py",
        "vllm/config/speculative.py",
        "vllm/v1/engine/core.py",
    ):
        assert path in text, path


def test_step_one_numbers_are_printed() -> None:
    roof = stdout(1, "roofline")
    assert re.search(r"batch   1:   7\.9 ms per step,\s+126 tokens/s", roof)
    assert re.search(r"batch   8:   8\.4 ms per step,\s+953 tokens/s", roof)
    assert "the caches read 16.8 GB per step, the weights 16.1 GB" in roof
    assert "about 153 tokens per step" in roof
    assert "eight sequences get 7.6 times what one gets, for 6 % more time" in flat(1)
    assert round(953 / 126, 1) == 7.6
    assert "at about 153 tokens per step" in flat(1)
    gpu = GPU()
    assert gpu.bandwidth == 2.039e12
    assert gpu.flops == 312e12
    assert "continuous batching: 2.6x the throughput" in stdout(1, "compare")


def test_step_two_numbers_are_printed() -> None:
    assert "12.1% of them used" in stdout(2, "waste")
    assert "98.6% used" in stdout(2, "waste")
    assert "token 35 of A is in slot 51" in stdout(2, "interleave")
    assert "in its third block (35 // 16 = 2), at offset 3" in flat(2)
    assert BLOCK_SIZE == 16
    assert "20.4 % to 38.2 %" in flat(2)  # cited: Kwon et al., SOSP 2023


def test_step_three_numbers_are_printed() -> None:
    shared = stdout(3, "shared")
    assert "2,010 tokens = 125 full blocks + 10" in shared
    assert "125 blocks reused" in shared
    assert "with token 5 changed: 0 blocks reused" in shared
    assert "The shared 2,010 tokens give 125 full blocks; the 10 tokens left over" in flat(3)
    assert "0 of 125 block hashes" in stdout(3, "salt")


def test_step_four_numbers_are_printed() -> None:
    knobs = stdout(4, "knobs")
    assert "= 738 blocks = 11,808 tokens" in knobs
    assert "30 preemptions" in knobs
    assert "At 0.23 the pool holds 11,808 tokens, the 96 requests want 47,559" in flat(4)
    assert "30 preemptions follow" in flat(4)
    assert "tokens actually kept: 47,559" in stdout(2, "waste")
    chunks = stdout(4, "chunks")
    assert re.search(r"  256: largest step   256 tokens.*worst TPOT  13\.2 ms", chunks)
    assert re.search(r"8,192: largest step 8,192 tokens.*worst TPOT  90\.0 ms", chunks)
    assert "13.2 ms at 256 tokens per step and 90.0 ms at 8,192" in flat(4)
    tiny = stdout(4, "tiny")
    assert "step 1: tokens {'r0': 1}, preempted ['r1']" in tiny
    resume = stdout(4, "resume")  # a preempted request gets back what the prefix cache kept
    assert "r1 is back with 65 tokens to restore" in resume
    assert "16 come from the prefix cache, 49 are computed again" in resume
    assert "with 65 tokens to restore" in flat(4)
    assert "256 sequences and 2,048 batched tokens" in flat(4)


def test_step_five_numbers_are_printed_and_the_formula_holds() -> None:
    assert "alpha 0.8: tokens per pass at gamma 1, 2, 4, 8 = 1.80, 2.44, 3.36, 4.33" in stdout(
        5, "gain"
    )
    assert expected_tokens_per_pass(0.8, 4) == pytest.approx(3.36, abs=0.005)
    exact = stdout(5, "exact")
    gap = float(re.search(r"largest gap between the output and the target: ([\d.]+)", exact)[1])
    assert gap < 0.005
    assert "same next-token logits as a fresh pass: True" in stdout(5, "rollback-check")
    assert "arXiv:2211.17192" in flat(5)
    assert "arXiv:2302.01318" in flat(5)


def test_step_six_numbers_are_printed() -> None:
    frontier = stdout(6, "frontier")
    ratios = [float(x) for x in re.findall(r"\| ([\d.]+)x", frontier)]
    assert len(ratios) == 4
    assert (min(ratios), max(ratios)) == (1.6, 2.6)
    assert "buys 1.6 to 2.6 times the throughput" in flat(6)
    assert re.search(r"batch   2: continuous   248 tok/s at  7\.9 ms/token", frontier)
    assert re.search(r"batch 128: continuous 2,584 tok/s at 16\.6 ms/token", frontier)
    assert "from 7.9 to 16.6 ms per token here" in flat(6)
