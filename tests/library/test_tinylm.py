"""The tiny model: shipped weights, agreement with PyTorch, the KV cache, and quantized evals."""

from __future__ import annotations

import numpy as np
import pytest

from promptdojo.decoding import Sampler
from promptdojo.kvcache import CostCounter
from promptdojo.tinylm import CharTokenizer, TinyLM, ops
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


def test_each_load_owns_its_weights() -> None:
    # The file is unzipped once per process; every model still gets its own copy of the arrays.
    a, b = TinyLM.load(), TinyLM.load()
    assert all(np.array_equal(a.weights[k], b.weights[k]) for k in a.weights)
    a.weights["embed"][:] = 0.0
    a.meta["seed"] = "changed"
    c = TinyLM.load()
    assert np.array_equal(b.weights["embed"], c.weights["embed"])
    assert c.weights["embed"].any()
    assert c.meta["seed"] != "changed"


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


def test_batched_forward_equals_step_by_step_cached_forward_in_float32(model: TinyLM) -> None:
    # One pass over the whole sequence with a causal mask does the work of one cached step per
    # token: the logits agree to float32 rounding.
    tokens = model.tokenizer.encode("def add(a, b):\n    return a + b")
    full = model.forward(tokens)
    cache = model.new_cache()
    steps = np.concatenate(
        [model.forward(tokens[i : i + 1], cache=cache) for i in range(tokens.size)]
    )
    assert full.dtype == steps.dtype == np.float32
    np.testing.assert_allclose(steps, full, rtol=1e-5, atol=1e-5)


def test_einsum_path_equals_matmul(model: TinyLM, monkeypatch: pytest.MonkeyPatch) -> None:
    # Pyodide's numpy has no BLAS, so the model multiplies with einsum there; CPython's wheels use
    # BLAS matmul. Both must give the same model.
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 7, 5)), rng.normal(size=(5, 3))
    np.testing.assert_allclose(ops._einsum_matmul(x[0], w), x[0] @ w, rtol=1e-12)
    tokens = model.tokenizer.encode("Return the number of items.")
    text = HELDOUT.read_text(encoding="utf-8")[:600]
    before = model.forward(tokens), model.perplexity(text)
    monkeypatch.setattr(ops, "matmul", ops._einsum_matmul)
    np.testing.assert_allclose(model.forward(tokens), before[0], rtol=1e-5, atol=1e-5)
    assert model.perplexity(text) == pytest.approx(before[1], rel=1e-6)


def test_tokenizer_encodes_like_a_loop_over_characters() -> None:
    tok = CharTokenizer()
    text = "def f(x):\n\treturn x ~ 1 # é, €, 😀, \x00 and a lone \ud800"
    unknown = tok.vocab.index("?")
    spaced = text.replace("\t", "    ")
    expected = [tok.vocab.index(ch) if ch in tok.vocab else unknown for ch in spaced]
    ids = tok.encode(text)
    assert ids.dtype == np.int64
    assert ids.tolist() == expected
    assert tok.encode("").shape == (0,)
    assert CharTokenizer("ab?é").encode("aébz€").tolist() == [0, 3, 1, 2, 2]


@pytest.mark.parametrize(("new", "cached"), [(1, 0), (7, 0), (1, 9), (5, 12), (128, 0)])
def test_forward_cost_is_what_forward_counts(model: TinyLM, new: int, cached: int) -> None:
    rng = np.random.default_rng(new + cached)
    cache = model.new_cache()
    if cached:
        model.forward(rng.integers(0, 96, cached), cache=cache)
    counter = CostCounter()
    model.forward(rng.integers(0, 96, new), cache=cache if cached else None, counter=counter)
    assert model.forward_cost(new, cached) == counter


@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("prompt", ["x", "Return the "])
def test_generation_cost_equals_a_real_run(model: TinyLM, use_cache: bool, prompt: str) -> None:
    counter = CostCounter()
    sampler = Sampler(temperature=1.0, top_k=30)
    model.generate(prompt, 24, sampler=sampler, seed=5, use_cache=use_cache, counter=counter)
    assert model.generation_cost(prompt, 24, use_cache=use_cache) == counter
    assert len(counter.steps) == 24


def test_token_nll_scores_every_window_or_an_evenly_spread_sample(model: TinyLM) -> None:
    text = HELDOUT.read_text(encoding="utf-8")[:2_000]  # 1,999 predictions: 15 full windows + 79
    nll = model.token_nll(text)
    assert nll.shape == (1_999,)
    assert model.perplexity(text) == pytest.approx(float(np.exp(nll.mean())), rel=1e-12)
    windows = [nll[i : i + 128] for i in range(0, 1_999, 128)]
    # 16 windows, 4 wanted: every 4th from the first.
    sample = np.concatenate([windows[i] for i in (0, 4, 8, 12)])
    np.testing.assert_allclose(model.token_nll(text, n_windows=4), sample, rtol=1e-6)
    assert model.perplexity(text, n_windows=4) == pytest.approx(float(np.exp(sample.mean())))
    assert model.token_nll(text, n_windows=16).size == model.token_nll(text, n_windows=99).size
    assert model.token_nll(text, window=32, n_windows=3).size == 3 * 32
    for bad in (0, -1, 2.5):
        with pytest.raises(ValueError, match="n_windows"):
            model.token_nll(text, n_windows=bad)


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


def test_quantized_perplexity_orders_by_who_shares_a_scale(model: TinyLM) -> None:
    base = model.perplexity()
    names = ("int8-tensor", "int4-g32", "int4-tensor")
    delta = {s: model.quantized(s).perplexity() - base for s in names}
    assert abs(delta["int8-tensor"]) < delta["int4-g32"] < delta["int4-tensor"]


def test_score_gives_the_nll_and_the_argmax_of_the_same_forward_pass(model: TinyLM) -> None:
    text = "Return the number of items in the list."
    nll, top1 = model.score(text, window=16)
    ids = model.tokenizer.encode(text)
    logits = model.forward(ids[:16])
    assert top1[:16].tolist() == logits.argmax(axis=-1).tolist()
    assert np.array_equal(nll, model.token_nll(text, window=16))


def test_score_scores_each_window_as_its_own_forward_pass(model: TinyLM) -> None:
    # score sends windows of one length through the model together, a bounded number at a
    # time: 41 windows of 9 characters (more than one batch) and a shorter last one of 7.
    text = HELDOUT.read_text(encoding="utf-8")[: 41 * 8 + 7]
    nll, top1 = model.score(text, window=8)
    ids = model.tokenizer.encode(text)
    expected_nll, expected_top1 = [], []
    for start in range(0, ids.size - 1, 8):
        chunk = ids[start : start + 9]
        logits = model.forward(chunk[:-1]).astype(np.float64)
        log_probs = logits - logits.max(axis=-1, keepdims=True)
        log_probs -= np.log(np.exp(log_probs).sum(axis=-1, keepdims=True))
        expected_nll.append(-log_probs[np.arange(chunk.size - 1), chunk[1:]])
        expected_top1.append(logits.argmax(axis=-1))
    np.testing.assert_allclose(nll, np.concatenate(expected_nll), rtol=1e-5, atol=1e-6)
    assert top1.tolist() == np.concatenate(expected_top1).tolist()
    assert nll.shape == (ids.size - 1,)


def test_generate_defaults_are_documented_and_used(model: TinyLM) -> None:
    assert Sampler(temperature=0.8, top_p=0.95) == model.DEFAULT_SAMPLER
    assert "temperature 0.8, top-p 0.95" in (TinyLM.generate.__doc__ or "")
    assert model.generate("def ", 20) == model.generate("def ", 20, model.DEFAULT_SAMPLER, seed=0)
    assert Sampler().temperature == 1.0
    assert Sampler().top_p == 1.0
    assert model.config.context == 128  # the lesson says so where it runs past it


def test_heldout_text_ships_and_is_not_tiny() -> None:
    assert len(HELDOUT.read_text(encoding="utf-8")) >= 8000


def test_bad_inputs(model: TinyLM) -> None:
    with pytest.raises(ValueError, match="non-empty 1-D"):
        model.forward([])
    with pytest.raises(ValueError, match="token ids must be within"):
        model.forward([10_000])
    with pytest.raises(ValueError, match="unknown scheme"):
        model.quantized("int3")
    with pytest.raises(ValueError, match="forward_cost needs"):
        model.forward_cost(0)
    with pytest.raises(ValueError, match="at least one token"):
        model.generation_cost("", 4)
