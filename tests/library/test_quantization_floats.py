"""The float formats of GPU serving (FP8, NVFP4, MXFP4) and the FORMATS table's real layouts."""

from __future__ import annotations

import numpy as np
import pytest

from promptdojo.quantization import (
    E2M1,
    E4M3,
    FORMATS,
    model_size,
    quantize_fp8,
    quantize_mxfp4,
    quantize_nvfp4,
    quantize_symmetric,
    round_to_float,
    snr_db,
)


def test_e2m1_has_exactly_the_fp4_values() -> None:
    dense = round_to_float(np.linspace(-7, 7, 20_001), E2M1)
    assert sorted(set(np.abs(dense).tolist())) == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def test_e4m3_has_127_finite_magnitudes_up_to_448() -> None:
    grid = np.concatenate([[0.0], np.geomspace(2.0**-10, 500, 200_000)])
    values = set(round_to_float(grid, E4M3).tolist())
    assert len(values) == 127  # 2**7 magnitudes, less the NaN code
    assert max(values) == 448.0
    assert min(v for v in values if v > 0) == 2.0**-9  # the smallest subnormal


def test_rounding_ties_go_to_the_even_code() -> None:
    assert round_to_float(np.array([0.25, 1.25, 2.5, 5.0]), E2M1).tolist() == [0, 1, 2, 4]
    assert round_to_float(np.array([17.0, 19.0]), E4M3).tolist() == [16.0, 20.0]


@pytest.fixture
def weights() -> np.ndarray:
    rng = np.random.default_rng(0)
    w = rng.normal(0.0, 0.02, size=(256, 512))
    w[rng.integers(0, 256, 40), rng.integers(0, 512, 40)] *= 12  # a few outliers
    return w


def test_mxfp4_scales_are_powers_of_two_from_each_block_of_32(weights) -> None:
    q = quantize_mxfp4(weights)
    blocks = weights.reshape(256, 16, 32)
    expected = 2.0 ** (np.floor(np.log2(np.abs(blocks).max(axis=-1))) - 2)
    assert np.array_equal(q.scales.reshape(256, 16, 32)[..., 0], expected)
    assert set(np.abs(q.codes).ravel().tolist()) <= {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0}
    assert q.bits_per_weight == 4.25 == FORMATS["MXFP4"].bits_per_weight


def test_nvfp4_block_scales_are_e4m3_under_a_tensor_scale(weights) -> None:
    q = quantize_nvfp4(weights)
    per_tensor = np.abs(weights).max() / (448 * 6)
    block = q.scales.reshape(256, 32, 16)[..., 0] / per_tensor
    assert np.allclose(round_to_float(block, E4M3), block, rtol=1e-12)
    assert block.max() <= 448
    assert np.abs(q.codes).max() <= 6
    assert FORMATS["NVFP4"].bits_per_weight == 4 + 8 / 16


def test_fp8_granularities(weights) -> None:
    rows = weights * np.geomspace(1e-4, 10, 256)[:, None]  # rows of very different sizes
    small = {g: quantize_fp8(rows, g).dequantize()[0] for g in ("tensor", "channel")}
    # One scale for all: the smallest row falls among E4M3's coarse subnormals.
    assert snr_db(rows[0], small["channel"]) > snr_db(rows[0], small["tensor"]) + 10
    block = quantize_fp8(rows, "block")
    assert len(np.unique(block.scales)) == 2 * 4  # 256 x 512 is 2 x 4 blocks of 128 x 128
    assert quantize_fp8(rows, "block").scales[0, 0] == np.abs(rows[:128, :128]).max() / 448
    with pytest.raises(ValueError, match="granularity"):
        quantize_fp8(rows, "group")


def test_finer_scales_give_less_error_at_four_bits(weights) -> None:
    snr = {
        "NVFP4": snr_db(weights, quantize_nvfp4(weights).dequantize()),
        "MXFP4": snr_db(weights, quantize_mxfp4(weights).dequantize()),
        "int4 tensor": snr_db(weights, quantize_symmetric(weights, 4).dequantize()),
        "FP8": snr_db(weights, quantize_fp8(weights).dequantize()),
    }
    assert snr["FP8"] > snr["NVFP4"] > snr["MXFP4"] > snr["int4 tensor"], snr


def test_formats_carry_real_layouts() -> None:
    assert FORMATS["int4-g128"].block == "128"
    assert FORMATS["int4-g128"].bits_per_weight == 4 + (16 + 4) / 128
    assert "calibrated" in FORMATS["int4-g128"].rounding
    assert FORMATS["NVFP4"].rounding == "round-to-nearest"
    assert FORMATS["FP8-block"].block == "128 x 128"
    assert "E8M0" in FORMATS["MXFP4"].scale
    assert "E4M3" in FORMATS["NVFP4"].scale
    assert model_size(8_000_000_000, "MXFP4") == 4_250_000_000
    with pytest.raises(ValueError, match="blocks of 16"):
        quantize_nvfp4(np.ones((2, 24)))


def test_gptq_trades_weight_error_for_output_error_on_correlated_inputs() -> None:
    from promptdojo.quantization import quantize_gptq

    rng = np.random.default_rng(1)
    mix = rng.normal(size=(16, 128))
    calibration, unseen = rng.normal(size=(512, 16)) @ mix, rng.normal(size=(512, 16)) @ mix
    w = rng.normal(size=(32, 128))
    rtn = quantize_symmetric(w, 4, group_size=64).dequantize()
    q = quantize_gptq(w, calibration, bits=4, group_size=64)
    gptq = q.dequantize()
    assert snr_db(unseen @ w.T, unseen @ gptq.T) > snr_db(unseen @ w.T, unseen @ rtn.T) + 3
    assert snr_db(w, gptq) < snr_db(w, rtn)  # the weights themselves moved further
    # The same storage as rounding to nearest: int codes within ±7, one scale per group of 64.
    plain = quantize_symmetric(w, 4, group_size=64)
    assert (q.codes.shape, q.scale.shape, q.bits_per_weight) == (
        plain.codes.shape,
        plain.scale.shape,
        plain.bits_per_weight,
    )
    assert np.abs(q.codes).max() <= 7
    # With uncorrelated inputs and no damping to speak of, there is nothing to exploit: GPTQ
    # quantizes column by column exactly like rounding to nearest.
    eye = quantize_gptq(w, np.eye(128), bits=4, group_size=64, damp=0.0)
    assert np.allclose(eye.dequantize(), rtn)
    with pytest.raises(ValueError, match="samples, inputs"):
        quantize_gptq(w, calibration[:, :100])
