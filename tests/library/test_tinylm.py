"""The tiny model: shipped weights, agreement with PyTorch, the KV cache, and quantized evals."""

from __future__ import annotations

import numpy as np
import pytest

from promptdojo.decoding import Sampler
from promptdojo.kvcache import CostCounter
from promptdojo.tinylm import TinyLM
from promptdojo.tinylm.model import HELDOUT, WEIGHTS


@pytest.fixture(scope="module")
def model() -> TinyLM:
    return TinyLM.load()


@pytest.fixture(scope="module")
def model64() -> TinyLM:
    return TinyLM.load(dtype=np.float64)


def test_weights_ship_in_one_small_file(model: TinyLM) -> None:
    assert WEIGHTS.stat().st_size <= 2 * 1024 * 1024
    assert model.config.n_layers >= 2
    assert model.config.n_heads > model.config.n_kv_heads  # grouped-query attention


def test_numpy_agrees_with_the_pytorch_model_that_trained_it(model64: TinyLM) -> None:
    # The training script stored the held-out perplexity PyTorch measured on these weights.
    assert model64.perplexity() == pytest.approx(model64.meta["torch_heldout_ppl"], rel=1e-5)


def test_it_learned_something(model: TinyLM) -> None:
    uniform = float(model.config.vocab_size)
    assert model.perplexity() < uniform / 10


def test_cached_logits_equal_recomputation_in_float64(model64: TinyLM) -> None:
    tokens = model64.tokenizer.encode("Return the number of items in the sequence.")
    full = model64.forward(tokens)
    cache = model64.new_cache()
    parts = [model64.forward(tokens[:7], cache=cache)]
    parts += [model64.forward(tokens[i : i + 1], cache=cache) for i in range(7, tokens.size)]
    assert np.abs(np.concatenate(parts) - full).max() < 1e-10


@pytest.mark.parametrize(
    "sampler", [Sampler(temperature=0), Sampler(temperature=0.8, top_k=20, top_p=0.9)]
)
def test_generation_is_identical_with_and_without_cache(model: TinyLM, sampler) -> None:
    with_cache = model.generate("def ", 40, sampler=sampler, seed=3, use_cache=True)
    without = model.generate("def ", 40, sampler=sampler, seed=3, use_cache=False)
    assert with_cache == without
    assert len(with_cache) == 40


def test_cost_counters_show_linear_against_quadratic_work(model: TinyLM) -> None:
    cached, uncached = CostCounter(), CostCounter()
    model.generate("x", 64, Sampler(temperature=0), use_cache=True, counter=cached)
    model.generate("x", 64, Sampler(temperature=0), use_cache=False, counter=uncached)
    c, u = cached.per_step(), uncached.per_step()
    # Cached: projections are constant per token; only the attention row grows.
    assert cached.per_step()[10] - cached.per_step()[9] == cached.per_step()[20] - c[19]
    assert uncached.total > 20 * cached.total
    # Uncached work per step grows with the prefix: step 60 costs far more than step 10.
    assert u[60] > 5 * u[10]
    assert c[60] < 1.5 * c[10]


def test_quantized_perplexity_orders_like_llama_cpp(model: TinyLM) -> None:
    base = model.perplexity()
    delta = {s: model.quantized(s).perplexity() - base for s in ("int8", "int4-g32", "int4")}
    assert abs(delta["int8"]) < delta["int4-g32"] < delta["int4"]


def test_heldout_text_ships_and_is_not_tiny() -> None:
    assert len(HELDOUT.read_text(encoding="utf-8")) >= 8000


def test_bad_inputs(model: TinyLM) -> None:
    with pytest.raises(ValueError, match="non-empty 1-D"):
        model.forward([])
    with pytest.raises(ValueError, match="token ids must be within"):
        model.forward([10_000])
    with pytest.raises(ValueError, match="unknown scheme"):
        model.quantized("int3")
