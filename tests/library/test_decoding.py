"""Decoding: worked examples derived by hand, Hugging Face semantics, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from promptdojo import decoding as d

finite_logits = arrays(
    np.float64,
    st.integers(1, 40),
    elements=st.floats(-20, 20, allow_nan=False, allow_infinity=False),
)


def test_softmax_worked_example() -> None:
    # logits [0, ln 2, ln 3] -> weights 1:2:3 -> probabilities 1/6, 2/6, 3/6
    probs = d.softmax([0.0, math.log(2), math.log(3)])
    np.testing.assert_allclose(probs, [1 / 6, 2 / 6, 3 / 6])


def test_temperature_reshapes_by_powers() -> None:
    # softmax(log p / T) is proportional to p ** (1 / T): at T = 0.5, 0.6:0.3:0.1 -> 36:9:1
    probs = d.softmax(np.log([0.6, 0.3, 0.1]), temperature=0.5)
    np.testing.assert_allclose(probs, np.array([36, 9, 1]) / 46)


def test_temperature_zero_is_greedy_and_negative_is_an_error() -> None:
    assert d.softmax([1.0, 5.0, 5.0], temperature=0).tolist() == [0.0, 1.0, 0.0]
    assert d.sample([1.0, 5.0, 2.0], temperature=0, rng=123) == 1
    with pytest.raises(ValueError, match="temperature must be a finite number >= 0"):
        d.softmax([1.0], temperature=-0.1)


def test_greedy_takes_the_first_of_tied_maxima() -> None:
    assert d.greedy([0.0, 2.0, 1.0, 2.0]) == 1


def test_top_k_keeps_every_token_tied_with_the_kth() -> None:
    out = d.top_k_filter([4.0, 3.0, 3.0, 3.0, 1.0], k=2)
    assert out.tolist() == [4.0, 3.0, 3.0, 3.0, -math.inf]


def test_top_k_at_or_above_vocab_size_changes_nothing() -> None:
    x = np.array([0.3, -1.0, 2.0])
    assert d.top_k_filter(x, k=3).tolist() == x.tolist()
    assert d.top_k_filter(x, k=50).tolist() == x.tolist()


def test_top_p_keeps_the_token_that_crosses_p() -> None:
    # Sorted probabilities 0.5, 0.3, 0.15, 0.05: mass 0.5 < 0.7, 0.8 >= 0.7 -> keep two.
    x = np.log([0.15, 0.5, 0.05, 0.3])
    kept = np.isfinite(d.top_p_filter(x, p=0.7))
    assert kept.tolist() == [False, True, False, True]


def test_top_p_min_tokens_to_keep_and_p_one() -> None:
    x = np.log([0.9, 0.05, 0.05])
    assert np.isfinite(d.top_p_filter(x, p=0.5)).sum() == 1
    assert np.isfinite(d.top_p_filter(x, p=0.5, min_tokens_to_keep=2)).sum() == 2
    assert d.top_p_filter(x, p=1.0).tolist() == x.tolist()


def test_min_p_scales_with_the_top_probability() -> None:
    # p_max = 0.5, min_p = 0.3 -> threshold 0.15: keep 0.5, 0.3, 0.15; drop 0.05.
    x = np.log([0.5, 0.3, 0.15, 0.05])
    assert np.isfinite(d.min_p_filter(x, 0.3)).tolist() == [True, True, True, False]


def test_repetition_penalty_divides_positive_multiplies_negative_once() -> None:
    out = d.repetition_penalty([3.0, -2.0, 1.0], seen=[0, 0, 0, 1], penalty=1.5)
    assert out.tolist() == [2.0, -3.0, 1.0]


def test_default_order_is_hugging_faces_and_order_changes_the_result() -> None:
    assert d.HF_ORDER == ("temperature", "top_k", "top_p", "min_p")
    x = np.log([0.5, 0.25, 0.15, 0.1])
    hf = d.process_logits(x, temperature=3.0, top_p=0.7)
    swapped = d.process_logits(x, temperature=3.0, top_p=0.7, order=("top_p", "temperature"))
    assert np.isfinite(hf).sum() == 3
    assert np.isfinite(swapped).sum() == 2


def test_sampling_is_seeded() -> None:
    x = np.log([0.5, 0.3, 0.2])
    first = d.sample(x, rng=np.random.default_rng(7), size=50)
    again = d.sample(x, rng=np.random.default_rng(7), size=50)
    assert first.tolist() == again.tolist()


def test_draw_counts_lesson_demo() -> None:
    logits = np.log([0.60, 0.25, 0.15])
    cold = d.draw_counts(logits, 20, temperature=0.2, seed=0, vocab=["the", "a", "one"])
    warm = d.draw_counts(logits, 20, temperature=1.0, seed=0, vocab=["the", "a", "one"])
    assert sum(cold.values()) == sum(warm.values()) == 20
    assert cold["the"] >= 18
    assert warm["a"] + warm["one"] > cold["a"] + cold["one"]


def test_draw_frequencies_converge_to_the_distribution() -> None:
    counts = d.draw_counts(np.log([0.5, 0.3, 0.2]), 200_000, seed=1)
    np.testing.assert_allclose(
        np.array(list(counts.values())) / 200_000, [0.5, 0.3, 0.2], atol=0.005
    )


def test_generate_and_beam_search_on_a_bigram_model() -> None:
    table = np.log(np.array([[0.1, 0.6, 0.3], [0.1, 0.1, 0.8], [0.7, 0.2, 0.1]]))

    def next_logits(tokens):
        return table[tokens[-1]]

    assert d.generate(next_logits, [0], 4, d.Sampler(temperature=0)) == [1, 2, 0, 1]
    best = d.beam_search(next_logits, [0], 2, num_beams=3)
    # 0->1->2: 0.6*0.8 = 0.48 beats 0->2->0: 0.3*0.7 = 0.21.
    assert best[0].tokens == (1, 2)
    assert best[0].logprob == pytest.approx(math.log(0.48))
    assert best[0].score == pytest.approx(math.log(0.48) / 2)


def test_beam_length_penalty_prefers_longer_or_shorter() -> None:
    table = np.log(np.array([[0.05, 0.5, 0.45], [0.5, 0.25, 0.25], [0.5, 0.25, 0.25]]))

    def next_logits(tokens):
        return table[tokens[-1]]

    long = d.beam_search(next_logits, [1], 3, num_beams=2, length_penalty=2.0, eos_token=0)
    short = d.beam_search(next_logits, [1], 3, num_beams=2, length_penalty=-1.0, eos_token=0)
    assert len(long[0].tokens) > len(short[0].tokens)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: d.softmax([]), "empty"),
        (lambda: d.softmax([[1.0, 2.0]]), "1-D"),
        (lambda: d.softmax([1.0, float("nan")]), "NaN"),
        (lambda: d.softmax([1.0, float("inf")]), r"\+inf"),
        (lambda: d.top_k_filter([1.0], 0), "k >= 1"),
        (lambda: d.top_p_filter([1.0], 1.5), r"within \[0, 1\]"),
        (lambda: d.top_p_filter([1.0], -0.1), r"within \[0, 1\]"),
        (lambda: d.min_p_filter([1.0], 2), r"within \[0, 1\]"),
        (lambda: d.repetition_penalty([1.0], [3], 1.2), "seen token ids"),
        (lambda: d.Sampler(order=("top_p", "bogus")), "order must list"),
        (lambda: d.draw_counts([1.0, 2.0], 5, vocab=["x"]), "vocab has 1 words"),
    ],
)
def test_bad_arguments_get_clear_errors(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@settings(max_examples=200, deadline=None)
@given(finite_logits, st.floats(0.01, 1.0))
def test_top_p_keeps_the_smallest_set_with_mass_at_least_p(x, p) -> None:
    probs = d.softmax(x)
    kept = np.isfinite(d.top_p_filter(x, p))
    mass = probs[kept].sum()
    assert mass >= p - 1e-9
    # Dropping the least likely kept token must fall below p (or it was the last one).
    if kept.sum() > 1:
        smallest = probs[kept].min()
        assert mass - smallest < p + 1e-9
    # Every kept token is at least as likely as every dropped one.
    if (~kept).any():
        assert probs[kept].min() >= probs[~kept].max() - 1e-12


@settings(max_examples=200, deadline=None)
@given(finite_logits, st.integers(1, 50))
def test_top_k_keeps_at_least_k_and_only_the_best(x, k) -> None:
    kept = np.isfinite(d.top_k_filter(x, k))
    assert kept.sum() >= min(k, x.size)
    if (~kept).any():
        assert x[kept].min() > x[~kept].max()


@settings(max_examples=100, deadline=None)
@given(finite_logits, st.floats(0.05, 5.0))
def test_softmax_is_a_distribution(x, t) -> None:
    probs = d.softmax(x, temperature=t)
    assert probs.min() >= 0
    assert probs.sum() == pytest.approx(1.0)


def test_a_warper_left_out_of_order_is_an_error_not_a_silent_skip() -> None:
    logits = np.log([0.5, 0.3, 0.2])
    with pytest.raises(ValueError, match="top_k is set but missing from order"):
        d.Sampler(top_k=1, order=("temperature",))
    with pytest.raises(ValueError, match="top_p is set but missing from order"):
        d.process_logits(logits, top_p=0.5, order=("temperature",))
    # Neutral settings need no place in the order, and llama.cpp's order is accepted.
    assert np.isfinite(d.process_logits(logits, order=())).all()
    kept = d.process_logits(logits, temperature=2.0, top_k=1, order=d.LLAMA_CPP_ORDER)
    assert int(np.isfinite(kept).sum()) == 1
    assert d.LLAMA_CPP_ORDER[-1] == "temperature"
