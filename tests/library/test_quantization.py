"""Quantization: worked examples, PyTorch and llama.cpp semantics, and error bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from promptdojo import quantization as q


def test_symmetric_int8_worked_example() -> None:
    # max |w| = 2.54 -> scale = 2.54 / 127 = 0.02; 1.01 / 0.02 = 50.5 -> 50 (half to even).
    t = q.quantize_symmetric([2.54, -1.01, 0.03, 1.03], bits=8)
    assert t.scale.item() == pytest.approx(0.02)
    assert t.codes.tolist() == [127, -50, 2, 52]


def test_symmetric_rounds_half_to_even() -> None:
    # scale = 7 / 7 = 1 at 4 bits: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> 0
    t = q.quantize_symmetric([7.0, 0.5, 1.5, 2.5, -0.5], bits=4)
    assert t.codes.tolist() == [7, 0, 2, 2, 0]


def test_asymmetric_follows_pytorch_minmax_observer() -> None:
    # range widened to include 0: [0, 5.1]; scale = 5.1 / 255 = 0.02; zero_point = 0.
    t = q.quantize_asymmetric([1.0, 5.1, 2.55], bits=8)
    assert t.scale.item() == pytest.approx(0.02)
    assert t.zero_point.item() == 0
    # 2.55 / 0.02 = 127.5 -> 128 (half to even)
    assert t.codes.tolist() == [50, 255, 128]
    # [-1, 3]: scale = 4 / 15, zero_point = round(1 / (4/15)) = round(3.75) = 4
    t4 = q.quantize_asymmetric([-1.0, 3.0, 0.0], bits=4)
    assert t4.zero_point.item() == 4
    assert t4.dequantize()[2] == 0.0  # zero is exactly representable


def test_per_channel_and_group_scales() -> None:
    w = np.array([[1.0, 2.0, 100.0, 50.0], [0.5, -0.25, 0.1, 0.0]])
    per_row = q.quantize_symmetric(w, bits=8, channel_axis=0)
    np.testing.assert_allclose(per_row.scale.ravel(), [100 / 127, 0.5 / 127])
    per_col = q.quantize_symmetric(w, bits=8, channel_axis=1)
    np.testing.assert_allclose(per_col.scale.ravel(), [1 / 127, 2 / 127, 100 / 127, 50 / 127])
    grouped = q.quantize_symmetric(w, bits=8, group_size=2)
    np.testing.assert_allclose(grouped.scale.ravel(), np.array([2, 100, 0.5, 0.1]) / 127)
    assert grouped.dequantize().shape == w.shape


def test_granularity_order_of_error() -> None:
    rng = np.random.default_rng(0)
    w = rng.normal(size=(64, 256)) * rng.lognormal(0, 1, size=(64, 1))
    errs = {
        name: q.mse(w, t.dequantize())
        for name, t in {
            "tensor": q.quantize_symmetric(w, 4),
            "channel": q.quantize_symmetric(w, 4, channel_axis=0),
            "group": q.quantize_symmetric(w, 4, group_size=32),
        }.items()
    }
    assert errs["group"] < errs["channel"] < errs["tensor"]


def test_int4_packing_nibble_order() -> None:
    packed = q.pack_int4([0x1, 0x2, 0x3, 0xF])
    assert packed.tolist() == [0x21, 0xF3]
    assert q.unpack_int4(packed, 4).tolist() == [1, 2, 3, 15]
    assert q.unpack_int4(q.pack_int4([-8, -1, 7]), 3, signed=True).tolist() == [-8, -1, 7]


def test_q8_0_matches_llama_cpp_reference() -> None:
    x = np.zeros(32, dtype=np.float32)
    x[:4] = [1.27, -0.635, 0.005, 0.0149]
    block = q.quantize_q8_0(x)
    # d = 1.27 / 127 = 0.01; codes: 127, -63.5 -> -64 (half away from zero), 0.5 -> 1, 1.49 -> 1
    assert block.qs[0, :4].tolist() == [127, -64, 1, 1]
    assert block.d.dtype == np.float16
    assert float(block.d[0]) == pytest.approx(0.01, rel=1e-3)
    assert (block.block_bytes, block.bits_per_weight, block.nbytes) == (34, 8.5, 34)


def test_q4_0_matches_llama_cpp_reference() -> None:
    x = np.zeros(32, dtype=np.float32)
    x[0], x[1], x[16], x[2] = 2.0, -4.0, 4.0, 1.0
    block = q.quantize_q4_0(x)
    # max |x| is -4.0 (first of the tied magnitudes): d = -4 / -8 = 0.5, id = 2.
    assert float(block.d[0]) == 0.5
    codes = q.dequantize_q4_0(block) / 0.5 + 8
    # x/d + 8.5 truncated: 2 -> 12, -4 -> 0, 4 -> 16 clamped to 15, 1 -> 10, 0 -> 8
    assert codes[[0, 1, 16, 2, 3]].tolist() == [12, 0, 15, 10, 8]
    # byte 0 holds element 0 (low nibble) and element 16 (high nibble)
    assert int(block.qs[0, 0]) == 12 | (15 << 4)
    assert (block.block_bytes, block.bits_per_weight) == (18, 4.5)


def test_error_metrics_worked_example() -> None:
    w, w_hat = np.array([1.0, -2.0, 2.0]), np.array([1.0, -1.0, 2.0])
    assert q.mse(w, w_hat) == pytest.approx(1 / 3)
    assert q.max_abs_error(w, w_hat) == 1.0
    assert q.snr_db(w, w_hat) == pytest.approx(10 * np.log10(9.0))


def test_model_sizes() -> None:
    assert q.model_size(7_000_000_000, "fp16") == 14_000_000_000
    assert q.model_size(7_000_000_000, "Q8_0") == 7_437_500_000
    assert q.model_size(7_000_000_000, "Q4_0") == 3_937_500_000


def test_a_checkpoint_keeps_its_embeddings_wide() -> None:
    """GPTQ and AWQ checkpoints of Llama-3.1-8B keep the embeddings and lm_head in fp16."""
    kept = 2 * 128_256 * 4_096
    real = q.model_size(8_030_000_000, "int4-g128", unquantized=kept)
    assert real == round((8_030_000_000 - kept) * (4 + 20 / 128) / 8) + 2 * kept
    assert 5.7e9 < real < 5.75e9
    assert real - q.model_size(8_030_000_000, "int4-g128") > 1.5e9
    assert q.model_size(100, "fp16", unquantized=100) == q.model_size(100, "fp16")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: q.quantize_symmetric([1.0], bits=1), "bits must be a whole number from 2 to 8"),
        (lambda: q.quantize_symmetric([1.0], bits=9), "bits must be"),
        (lambda: q.quantize_asymmetric([1.0], bits=3.5), "bits must be"),
        (lambda: q.quantize_symmetric([], bits=8), "empty"),
        (lambda: q.quantize_symmetric([np.nan], bits=8), "NaN"),
        (lambda: q.quantize_symmetric(np.ones((2, 3)), group_size=2), "multiple of group_size"),
        (
            lambda: q.quantize_symmetric(np.ones(4), channel_axis=3),
            "channel_axis 3 is out of range",
        ),
        (lambda: q.quantize_q8_0(np.ones(33)), "multiple of 32"),
        (lambda: q.model_size(10, "fp12"), "unknown format"),
        (lambda: q.model_size(10, "int4", unquantized=11), "more than n_params"),
        (lambda: q.model_size(10, "int4", unquantized=-1), "unquantized must be"),
    ],
)
def test_bad_arguments_get_clear_errors(call, message) -> None:
    with pytest.raises(ValueError, match=message):
        call()


weights = arrays(np.float64, st.integers(1, 64), elements=st.floats(-100, 100, allow_nan=False))


@settings(max_examples=200, deadline=None)
@given(weights, st.integers(2, 8))
def test_symmetric_error_is_at_most_half_a_step(w, bits) -> None:
    t = q.quantize_symmetric(w, bits)
    assert np.all(np.abs(t.dequantize() - w) <= t.scale / 2 * (1 + 1e-9) + 1e-12)


@settings(max_examples=200, deadline=None)
@given(weights, st.integers(2, 8))
def test_asymmetric_error_is_at_most_half_a_step(w, bits) -> None:
    t = q.quantize_asymmetric(w, bits)
    assert t.codes.min() >= 0
    assert t.codes.max() <= 2**bits - 1
    assert np.all(np.abs(t.dequantize() - w) <= t.scale / 2 * (1 + 1e-6) + 1e-9)


@settings(max_examples=100, deadline=None)
@given(arrays(np.int8, st.integers(0, 65), elements=st.integers(-8, 7)))
def test_int4_pack_roundtrip(codes) -> None:
    assert q.unpack_int4(q.pack_int4(codes), codes.size, signed=True).tolist() == codes.tolist()


def test_subnormal_weights_get_the_smallest_step_not_a_division_by_zero() -> None:
    w = np.array([5e-324, -1e-322, 0.0])
    with np.errstate(divide="raise", invalid="raise"):
        t = q.quantize_symmetric(w, 8)
    assert np.all(t.scale > 0)
    assert np.all(np.abs(t.dequantize() - w) <= t.scale / 2 + 1e-323)


def test_decoding_bound_counts_the_batch_caches_and_the_weights_once() -> None:
    from promptdojo.quantization import decode_tokens_per_second

    one = decode_tokens_per_second(16e9, 2e12)
    assert one == 2e12 / 16e9
    batch = decode_tokens_per_second(16e9, 2e12, kv_bytes=1e9, batch=64)
    assert batch == 2e12 / (16e9 + 64e9)
    assert 64 * batch > 10 * one  # the batch in all: weights read once for all of it
    with pytest.raises(ValueError, match="batch"):
        decode_tokens_per_second(16e9, 2e12, batch=0)
