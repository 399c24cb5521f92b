"""The points of the 2026-12-04 review of the first lesson, each held to the prose, the library or
the recorded outputs (which ``make test`` proves equal to live runs in CPython, Pyodide and
Chromium)."""

from __future__ import annotations

import re

import pytest

from promptdojo.checking.record import load_records
from promptdojo.course import load_lesson
from promptdojo.decoding import Sampler
from promptdojo.kvcache import (
    GIB,
    MODELS,
    UnsupportedAttention,
    format_bytes,
    kv_blocks_that_fit,
    kv_bytes_per_token,
    kv_cache_budget,
    kv_cache_bytes,
)
from promptdojo.quantization import FORMATS, model_size
from promptdojo.tinylm import TinyLM
from tests.conftest import REAL_LESSONS
from tests.lessons.feedback import Exercise

LESSON = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization")


def flat(number: int) -> str:
    return " ".join(LESSON.steps[number - 1].path.read_text().split())


def stdout(number: int, cell: str) -> str:
    return load_records(LESSON.steps[number - 1])[cell]["stdout"]


def prose_words(number: int) -> int:
    text = LESSON.steps[number - 1].path.read_text().split("---", 2)[2]
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return len([w for w in text.split() if not w.startswith("#")])


def test_w1_sampler_defaults_are_vllms_not_hugging_faces() -> None:
    two = flat(2)
    assert "as in Hugging Face" not in two
    assert "as a bare vLLM `SamplingParams()` does (top-k off)" in two
    for fact in ("`do_sample=False`", "`top_k=50`", "`generation_config.json`"):
        assert fact in two, fact
    doc = " ".join((Sampler.__doc__ or "").split())
    assert "as a bare vLLM ``SamplingParams()`` does" in doc
    assert "``top_k=50``" in doc


def test_w2_current_architectures_are_sized_in_the_lesson() -> None:
    per_token = stdout(5, "per-token")
    for name in ("DeepSeek-V3", "Qwen3-Next-80B-A3B", "gpt-oss-120b"):
        assert name in per_token
    assert "70,272 bytes = 68.62 KiB per token" in stdout(5, "mla-compare")
    assert kv_bytes_per_token(MODELS["DeepSeek-V3"]) < kv_bytes_per_token(MODELS["Llama-3.1-8B"])
    long = stdout(5, "long-context")
    assert "Qwen3-Next-80B-A3B  at 128k tokens: 3.00 GiB + 37.69 MiB of fixed state" in long
    assert "it refuses, naming the field, any layout it cannot size" in flat(5)


def test_m1_output_noise_matches_weight_noise() -> None:
    assert "cancel out" not in flat(1)
    assert "more weights do not cancel it" in flat(1)
    rows = re.findall(r"weights SNR ([\d.]+) dB, outputs SNR ([\d.]+) dB", stdout(6, "fan-in"))
    assert len(rows) == 3
    for weights, outputs in rows:
        assert abs(float(weights) - float(outputs)) < 1.5


def test_m2_m3_reading_the_cache_costs_time_and_a_paged_pool_is_not_reserved() -> None:
    assert "re-reading it is cheap" not in flat(1)
    assert "for a batch at long contexts slower than reading the weights" in flat(1)
    five = flat(5)
    assert "memory you must reserve" not in five
    assert "does not set memory aside for the context you allow" in five
    assert "every session reaches its full 8,192 tokens" in five
    lines = stdout(5, "batching").splitlines()
    share = {line.split(":")[0].strip(): int(re.search(r"KV +(\d+)%", line)[1]) for line in lines}
    assert share["32,768 tokens x  8"] > 50 > share["4,096 tokens x  1"]


def test_roofline_findings_are_in_the_printed_numbers() -> None:
    rows = {}
    for line in stdout(5, "batching").splitlines():
        key, rest = line.split(":", 1)
        each, total = re.search(r"([\d.]+) tok/s each, +([\d,]+) in all", rest).groups()
        rows[key.strip()] = (float(each), int(total.replace(",", "")))
    small, big = rows["4,096 tokens x  1"], rows["4,096 tokens x 64"]
    assert big[0] < small[0], "each sequence is slower in a batch"
    assert big[1] > 20 * small[1], "but the batch in all is far faster"
    assert "2,588 in all" in stdout(5, "batching")
    assert "123 tokens per second" in flat(5)
    assert "(does not fit)" in stdout(5, "batching")
    assert 'slider("batch size", 1, 128, value=8)' in LESSON.steps[4].path.read_text()
    assert 'toggle("fp8 KV cache", value=False)' in LESSON.steps[4].path.read_text()


def test_m4_llama_deltas_in_percent() -> None:
    seven = flat(7)
    assert "redundancy" not in seven
    base = 6.2332  # llama.cpp examples/perplexity/README.md, Llama-3-8B f16
    for delta, shown in ((0.0026, "+0.04%"), (0.1754, "+2.8%"), (0.4685, "+7.5%")):
        assert f"{100 * delta / base:+.{len(shown.split('.')[1]) - 1}f}%" == shown
        assert shown in seven


def test_nits() -> None:
    one, two, four, five, six = flat(1), flat(2), flat(4), flat(5), flat(6)
    assert "one more pass per generated token" in one  # N1
    adaptive = stdout(3, "adaptive")  # N2: a confident context
    assert float(re.search(r"'paramet' top token ([\d.]+)", adaptive)[1]) > 0.9
    for fact in ("EAGLE-3", "rejection-sampling", "always adds one token of its own", "truncate"):
        assert fact in four, fact  # N4
    assert '"int4-g128"' in five
    assert "GPTQ and AWQ checkpoints use groups of 128" in six  # N6
    assert "an RTX 4090's memory" in six
    assert "H100 SXM 3.35" in six
    assert "4.5/16 = 28%" in six
    assert "about 3.5 times" in six
    assert "batch-invariant mode" in two  # N9
    assert "plus a scale per tensor" in five
    assert "evaluate" in five
    assert "cache salt" in five  # N11
    assert "top-k 40 and min-p 0.05" in " ".join((TinyLM.generate.__doc__ or "").split())  # N13
    assert "Mistral-7B-v0.3" in five
    assert "Qwen2.5-7B-Instruct" in five
    assert "IQ4_XS" in six
    assert "MXFP4_MOE" in six


def test_step_five_points_to_the_serving_lesson_and_step_six_covers_gpu_formats() -> None:
    five = flat(5)
    title = "Serving: batching, the paged KV cache and speculative decoding"
    assert f"[{title}](lesson:serving)" in five
    assert "prefix_match_unit" not in five
    formats = stdout(6, "ship-formats")
    for name in ("FP8", "FP8-block", "int4-g128", "NVFP4", "MXFP4"):
        assert re.search(rf"^{name} +{FORMATS[name].bits_per_weight:.2f} bits", formats, re.M)
    assert "round-to-nearest" in flat(6)
    assert "Calibration" in flat(6)
    assert '"NVFP4"]' in flat(7)


def test_steps_are_rebalanced() -> None:
    assert len(LESSON.steps) == 7
    assert prose_words(1) < 540, prose_words(1)  # about 500, and its four headings
    assert prose_words(5) < 1250, prose_words(5)


def test_calibration_lowers_output_error_at_the_same_storage() -> None:
    rows = dict(
        (m[0].strip(), (float(m[1]), float(m[2])))
        for m in re.findall(
            r"^(\S.*?) +weights SNR +([\d.]+) dB, outputs SNR +([\d.]+) dB$",
            stdout(6, "calibrated"),
            re.M,
        )
    )
    assert rows["GPTQ"][1] > rows["round-to-nearest"][1] + 3, rows
    assert rows["GPTQ"][0] < rows["round-to-nearest"][0], rows
    assert FORMATS["int4-g128"].rounding.startswith("round-to-nearest, or calibrated")


# The second domain review of the reworked lesson.


def test_r2_vllm_applies_the_models_generation_config_by_default() -> None:
    two = flat(2)
    for fact in ('`generation_config="auto"`', "`LLM.generate`", "temperature 0.6 with top-p 0.9"):
        assert fact in two, fact
    doc = " ".join((Sampler.__doc__ or "").split())
    assert '``generation_config="auto"``' in doc
    assert "``LLM.get_default_sampling_params()``" in doc


def test_r3_r4_mla_engines_cache_the_latent_and_the_starter_sizes_the_old_hf_cache() -> None:
    five = flat(5)
    assert "Its 128 heads do not cache keys and values at all" not in five
    assert "Its 128 heads cache no keys and values of their own" in five
    # transformers cached the rebuilt keys and values until its pull request 47761 (merged
    # 2026-08-04: "the cache stored is not actually compressed ... This PR fixes that").
    assert "Hugging Face transformers caches the rebuilt" not in five
    assert "so does Hugging Face transformers since a fix of August 2026" in five
    assert "Before it, transformers cached the rebuilt keys and values" in five
    config = {"layers": 61, "heads": 128, "nope": 128, "rope": 64, "v": 128}
    hf = config["layers"] * config["heads"] * (config["nope"] + config["rope"] + config["v"]) * 2
    assert f"value 128 wide per head: {format_bytes(hf)} per token" in five
    starter = next(c for c in LESSON.steps[4].cells if c.id == "mla")
    namespace: dict = {}
    exec(starter.code, namespace)  # plain arithmetic on the config's numbers
    got, fields = namespace["per_token"], namespace["deepseek"]
    assert fields["v_head_dim"] == config["v"]
    assert fields["qk_nope_head_dim"] == config["nope"]
    assert got == hf == 4_997_120, got


def test_r6_the_hybrid_pool_is_shared() -> None:
    doc = " ".join((kv_blocks_that_fit.__doc__ or "").split())
    assert "pools of their own" not in doc
    assert "one shared pool of blocks whose pages all have the same size" in doc
    with pytest.raises(UnsupportedAttention) as refused:
        kv_blocks_that_fit(MODELS["gpt-oss-120b"], 40 * GIB, 32_768)
    assert "separately" not in str(refused.value)
    assert "shared pool" in str(refused.value)


def test_r7_the_cache_outweighs_the_weights_for_a_batch_not_one_sequence() -> None:
    llama = MODELS["Llama-3.1-8B"]
    weights = model_size(8_030_000_000, "bf16")
    assert weights // kv_bytes_per_token(llama) > 120_000  # one sequence: only past ~122k tokens
    assert kv_cache_bytes(llama, 32_768, batch=8) > weights  # step 5's batch of eight
    assert "for a batch at long contexts" in flat(1)


def test_r8_step_five_points_to_its_middle_section() -> None:
    five = flat(5)
    assert "this step ends with them" not in five
    assert "the section on GQA, MLA, windows and linear layers shows how" in five
    assert "## Fewer numbers per token: GQA, MLA, windows and linear layers" in five


def test_r9_the_int4_checkpoint_keeps_embeddings_and_lm_head_in_fp16() -> None:
    five = flat(5)
    kept = 2 * 128_256 * 4_096
    real = model_size(8_030_000_000, "int4-g128", unquantized=kept)
    assert f"`weights_int4` is {real / 1e9:.2f} GB, not the 4.2 GB" in five
    assert f"{model_size(8_030_000_000, 'int4-g128') / 1e9:.1f} GB" == "4.2 GB"
    capacity = Exercise(LESSON, 5, "capacity")
    assert capacity.passes(capacity.exercise.solution.code)
    everything_int4 = (
        "def sessions_on(gpu_bytes, bytes_per_number):\n"
        "    left = kv_cache_budget(gpu_bytes, model_size(8_030_000_000, 'int4-g128'), 0.92, GIB)\n"
        "    return int(left // kv_cache_bytes(llama, 8_192, dtype=bytes_per_number))\n"
    )
    message = capacity.message(everything_int4)
    rtx_4090 = 24_564 * 2**20
    left = kv_cache_budget(rtx_4090, real, 0.92, GIB)
    per_session = kv_cache_bytes(MODELS["Llama-3.1-8B"], 8_192)
    too_many = kv_cache_budget(rtx_4090, model_size(8_030_000_000, "int4-g128"), 0.92, GIB)
    assert too_many // per_session > left // per_session
    assert f"you fit {too_many // per_session} sessions" in message, message


def test_r10_hints_lead_without_spelling_out_the_formula() -> None:
    step = LESSON.steps[4]
    roofline = " ".join(h.html for h in step.exercise("roofline").hints)
    for spelled in ("context * kv_per_token", "Add the weights once", "divided by bandwidth"):
        assert spelled not in roofline, spelled
    capacity = " ".join(h.html for h in step.exercise("capacity").hints)
    for spelled in ("8 kv heads of 128", "K and V, in each"):
        assert spelled not in capacity, spelled
