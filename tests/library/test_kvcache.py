"""Attention, the cache, cost counters and memory budgets of real models."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptdojo import kvcache as kv


def naive_attention(q, k, v):
    """One head at a time, straight from the definition, for comparison."""
    n_heads, t_q, hd = q.shape
    n_kv, t_k, _ = k.shape
    out = np.zeros_like(q)
    for h in range(n_heads):
        j = h // (n_heads // n_kv)
        for i in range(t_q):
            visible = t_k - t_q + i + 1
            s = q[h, i] @ k[j, :visible].T / np.sqrt(hd)
            w = np.exp(s - s.max())
            out[h, i] = (w / w.sum()) @ v[j, :visible]
    return out


@pytest.mark.parametrize(("heads", "kv_heads"), [(4, 4), (4, 2), (4, 1)])
def test_attention_matches_the_definition_for_mha_gqa_mqa(heads, kv_heads) -> None:
    rng = np.random.default_rng(heads * 10 + kv_heads)
    q = rng.normal(size=(heads, 5, 8))
    k, v = rng.normal(size=(2, kv_heads, 7, 8))
    np.testing.assert_allclose(kv.attention(q, k, v), naive_attention(q, k, v), atol=1e-12)


def test_query_head_reads_kv_head_h_div_group() -> None:
    # kv head 0 holds values 0, kv head 1 holds values 1: with 4 query heads and 2 kv heads,
    # query heads 0 and 1 must read 0, heads 2 and 3 must read 1.
    q = np.zeros((4, 1, 2))
    k = np.zeros((2, 3, 2))
    v = np.stack([np.zeros((3, 2)), np.ones((3, 2))])
    assert kv.attention(q, k, v)[:, 0, 0].tolist() == [0.0, 0.0, 1.0, 1.0]


def test_causal_mask_hides_the_future() -> None:
    q = np.ones((1, 3, 1))
    k = np.ones((1, 3, 1))
    v = np.array([[[1.0], [10.0], [100.0]]])
    out, weights = kv.attention(q, k, v, return_weights=True)
    assert out[0, :, 0].tolist() == pytest.approx([1.0, 5.5, 37.0])
    np.testing.assert_allclose(weights[0], [[1, 0, 0], [0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]])


def test_cache_appends_and_reports_shape_and_bytes() -> None:
    cache = kv.KVCache(n_layers=2, n_kv_heads=2, head_dim=4, dtype=np.float16)
    for step in range(40):  # past the initial capacity
        for layer in range(2):
            k_all, _ = cache.append(layer, np.full((2, 1, 4), step), np.full((2, 1, 4), -step))
        assert k_all[0, :, 0].tolist() == list(range(step + 1))
    assert cache.shape == (2, 2, 2, 40, 4)
    assert cache.nbytes == 2 * 2 * 2 * 40 * 4 * 2
    with pytest.raises(ValueError, match="n_kv_heads=2"):
        cache.append(0, np.zeros((3, 1, 4)), np.zeros((3, 1, 4)))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(0, 11), st.sampled_from([(4, 4), (4, 2), (2, 1)]))
def test_incremental_attention_with_cache_equals_recomputation(length, split, heads) -> None:
    split = min(split, length - 1)
    n_heads, n_kv = heads
    rng = np.random.default_rng(length * 100 + split)
    q = rng.normal(size=(n_heads, length, 4))
    k, v = rng.normal(size=(2, n_kv, length, 4))
    full = kv.attention(q, k, v)
    cache = kv.KVCache(1, n_kv, 4)
    ck, cv = cache.append(0, k[:, : split + 1], v[:, : split + 1])
    parts = [kv.attention(q[:, : split + 1], ck, cv)]
    for t in range(split + 1, length):
        ck, cv = cache.append(0, k[:, t : t + 1], v[:, t : t + 1])
        parts.append(kv.attention(q[:, t : t + 1], ck, cv))
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10), st.integers(1, 6), st.integers(0, 6), st.sampled_from([(4, 2), (2, 1)]))
def test_truncate_rolls_back_rejected_draft_tokens(prefix, drafted, accepted, heads) -> None:
    """Speculative decoding: append a draft, keep the accepted part, continue from there."""
    accepted = min(accepted, drafted)
    n_heads, n_kv = heads
    rng = np.random.default_rng(prefix * 100 + drafted * 10 + accepted)
    kept = prefix + accepted
    # The sequence the target model really continues with: the prefix, the accepted draft
    # tokens, then a fresh (corrected) token whose keys differ from the rejected draft's.
    k, v = rng.normal(size=(2, n_kv, kept + 1, 4))
    rejected_k, rejected_v = rng.normal(size=(2, n_kv, drafted - accepted, 4))
    q = rng.normal(size=(n_heads, 1, 4))
    cache = kv.KVCache(n_layers=2, n_kv_heads=n_kv, head_dim=4)
    for layer in range(2):
        cache.append(layer, k[:, :kept], v[:, :kept])
        cache.append(layer, rejected_k, rejected_v)
    assert len(cache) == prefix + drafted
    cache.truncate(kept)
    assert cache.shape == (2, 2, n_kv, kept, 4)
    assert cache.nbytes == 2 * 2 * n_kv * kept * 4 * 8
    for layer in range(2):
        ck, cv = cache.append(layer, k[:, kept:], v[:, kept:])
        np.testing.assert_array_equal(ck, k)
        np.testing.assert_array_equal(cv, v)
        np.testing.assert_allclose(
            kv.attention(q, ck, cv, causal=False), kv.attention(q, k, v, causal=False)
        )


def test_truncate_refuses_what_it_cannot_do() -> None:
    cache = kv.KVCache(n_layers=2, n_kv_heads=1, head_dim=2)
    cache.append(0, np.zeros((1, 4, 2)), np.zeros((1, 4, 2)))
    cache.append(1, np.zeros((1, 2, 2)), np.zeros((1, 2, 2)))  # mid-forward: layer 1 behind
    with pytest.raises(ValueError, match="cannot truncate to 3 positions: layer 1 holds only 2"):
        cache.truncate(3)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="whole number of positions"):
            cache.truncate(bad)
    cache.truncate(0)
    assert len(cache) == 0
    assert cache.nbytes == 0


def test_attention_cost_counter_is_linear_per_token_with_cache() -> None:
    counter = kv.CostCounter()
    q = np.zeros((2, 1, 8))
    for n in (10, 20, 40):
        kv.attention(q, np.zeros((2, n, 8)), np.zeros((2, n, 8)), counter=counter)
        counter.mark_step()
    assert counter.per_step() == [2 * 2 * n * 8 for n in (10, 20, 40)]


# Published configs: (layers, heads, kv_heads, head_dim).
PUBLISHED = {
    "GPT-2 small": (12, 12, 12, 64),
    "Llama-2-7B": (32, 32, 32, 128),
    "Llama-3-8B": (32, 32, 8, 128),
    "Mistral-7B-v0.3": (32, 32, 8, 128),
    "Qwen2.5-7B-Instruct": (28, 28, 4, 128),
    "Llama-3-70B": (80, 64, 8, 128),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_model_configs_match_their_published_configs(name) -> None:
    m = kv.MODELS[name]
    assert (m.layers, m.heads, m.kv_heads, m.head_dim) == PUBLISHED[name]


def test_cited_memory_facts() -> None:
    # "Llama-3-8B holds 128 KiB of KV cache per token in fp16": 2 * 32 * 8 * 128 * 2 bytes.
    assert kv.kv_bytes_per_token(kv.MODELS["Llama-3-8B"]) == 128 * 1024
    # Llama-2-7B has no GQA: 4x as much, 512 KiB per token.
    assert kv.kv_bytes_per_token(kv.MODELS["Llama-2-7B"]) == 512 * 1024
    # Llama-3-70B: 2 * 80 * 8 * 128 * 2 = 320 KiB per token.
    assert kv.kv_bytes_per_token(kv.MODELS["Llama-3-70B"]) == 320 * 1024
    # GPT-2 small: 2 * 12 * 12 * 64 * 2 = 36 KiB per token.
    assert kv.kv_bytes_per_token(kv.MODELS["GPT-2 small"]) == 36 * 1024
    # A 32k context of Llama-3-8B: 4 GiB; for a batch of 8, 32 GiB.
    assert kv.kv_cache_bytes(kv.MODELS["Llama-3-8B"], 32 * 1024) == 4 * 1024**3
    assert kv.format_bytes(kv.kv_cache_bytes(kv.MODELS["Llama-3-8B"], 32768, 8)) == "32.00 GiB"
    assert kv.MODELS["Llama-3-8B"].attention == "GQA"
    assert kv.MODELS["Llama-2-7B"].attention == "MHA"


def test_paged_blocks_and_capacity_check() -> None:
    layout = kv.paged_blocks(1000, block_size=16)
    assert (layout.blocks, layout.wasted_slots) == (63, 8)
    assert layout.utilization == pytest.approx(1000 / 1008)
    model = kv.MODELS["Llama-3-8B"]
    # 2 MiB per 16-token block; 1 GiB holds 512 blocks = 8192 tokens.
    assert kv.kv_blocks_that_fit(model, 1024**3, max_seq_len=8192) == 512
    # vLLM V1's wording (vllm/v1/core/kv_cache_utils.py, _check_enough_kv_cache_memory), as
    # current releases word it, sizes rounded by vLLM's format_gib (vllm/utils/mem_utils.py).
    expected = (
        "To serve at least one request with the model's max seq len (8193), (1.0 GiB KV cache "
        "is needed, which is larger than the available KV cache memory (1.0 GiB). Based on the "
        "available memory, the estimated maximum model length is 8192. Try increasing "
        "`gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or "
        "decreasing `max_model_len` when initializing the engine. See "
        "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
    )
    with pytest.raises(kv.CapacityError) as error:
        kv.kv_blocks_that_fit(model, 1024**3, max_seq_len=8193)
    assert str(error.value) == expected
    assert not hasattr(kv, "check_capacity"), "renamed: it returns a number of blocks"


def test_bad_arguments_get_clear_errors() -> None:
    with pytest.raises(ValueError, match="multiple of n_kv_heads"):
        kv.attention(np.zeros((3, 1, 4)), np.zeros((2, 1, 4)), np.zeros((2, 1, 4)))
    with pytest.raises(ValueError, match="must be"):
        kv.attention(np.zeros((1, 4)), np.zeros((1, 1, 4)), np.zeros((1, 1, 4)))
    with pytest.raises(ValueError, match="unknown cache dtype"):
        kv.kv_bytes_per_token(kv.MODELS["Llama-3-8B"], "fp12")
