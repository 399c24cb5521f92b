"""What quantization costs: error measures, and the bytes a model takes in each format."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _pair(w: object, w_hat: object) -> tuple[np.ndarray, np.ndarray]:
    """Weights and their dequantized copy as float64 arrays of one shape."""
    a, b = np.asarray(w, dtype=np.float64), np.asarray(w_hat, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    return a, b


def mse(w: object, w_hat: object) -> float:
    """Mean squared error between weights and their dequantized copy.

    Example:
        >>> mse([1.0, 2.0], [1.0, 1.5])
        0.125
    """
    a, b = _pair(w, w_hat)
    return float(np.mean((a - b) ** 2))


def snr_db(w: object, w_hat: object) -> float:
    """Signal-to-noise ratio in dB: ``10 log10(sum w² / sum (w - w_hat)²)``; ``inf`` if exact.

    Example:
        >>> round(snr_db([1.0, -1.0], [1.1, -1.1]), 1)
        20.0
    """
    a, b = _pair(w, w_hat)
    noise = float(np.sum((a - b) ** 2))
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(a**2) / noise))


def max_abs_error(w: object, w_hat: object) -> float:
    """Largest per-weight error ``max |w - w_hat|``.

    Example:
        >>> max_abs_error([1.0, 2.0], [1.25, 2.0])
        0.25
    """
    a, b = _pair(w, w_hat)
    return float(np.max(np.abs(a - b)))


def error_report(w: object, w_hat: object) -> dict[str, float]:
    """MSE, SNR (dB) and maximum absolute error in one dict.

    Example:
        >>> error_report([1.0, -1.0], [1.1, -1.1])["max_abs"] == max_abs_error([1.0], [1.1])
        True
    """
    return {"mse": mse(w, w_hat), "snr_db": snr_db(w, w_hat), "max_abs": max_abs_error(w, w_hat)}


@dataclass(frozen=True)
class Format:
    """A weight storage format: bits per weight (scales included), how many weights share a
    scale, what the codes and the scales are stored as, and how the codes are chosen."""

    bits_per_weight: float
    block: str
    element: str
    scale: str
    rounding: str = "round-to-nearest"


_RTN_OR_CALIBRATED = "round-to-nearest, or calibrated on sample activations (GPTQ, AWQ)"
_K = "super-block of 256 (sub-blocks of 16 or 32)"

#: Common storage formats and their real layouts.
#:
#: * llama.cpp (ggml's ``ggml-common.h``): Q8_0 and Q4_0 use blocks of 32 weights with one fp16
#:   scale (34 and 18 bytes); the k-quants use super-blocks of 256 (``block_q*_K``: Q2_K 84
#:   bytes, Q3_K 110, Q4_K 144, Q5_K 176, Q6_K 210). A file named Q4_K_M mixes Q4_K and Q6_K
#:   tensors, about 4.9 bits per weight over a Llama-3-8B (4.58 GiB in llama.cpp's quantize tool).
#:   llama.cpp's imatrix option calibrates the same formats.
#: * GPU serving: FP8 E4M3 with fp32 scales per tensor, per channel or per 128×128 block
#:   (DeepSeek-V3); NVFP4 (E2M1 in blocks of 16, an E4M3 scale each and an fp32 scale per tensor;
#:   Blackwell GPUs); MXFP4 (E2M1 in blocks of 32, a power-of-two E8M0 scale each; gpt-oss ships
#:   in it); int4 in groups of 128 along the input (the GPTQ and AWQ checkpoints vLLM runs with its
#:   Marlin kernels: an fp16 scale and a 4-bit zero point per group).
#: * ``int8`` and ``int4`` are bare codes with no scales counted.
FORMATS: dict[str, Format] = {
    "fp32": Format(32.0, "-", "fp32", "-", "exact"),
    "fp16": Format(16.0, "-", "fp16", "-"),
    "bf16": Format(16.0, "-", "bf16", "-"),
    "FP8": Format(8.0, "whole tensor", "FP8 E4M3", "fp32"),
    "FP8-channel": Format(8.0, "one output channel", "FP8 E4M3", "fp32"),
    "FP8-block": Format(8 + 32 / 128**2, "128 x 128", "FP8 E4M3", "fp32"),
    "Q8_0": Format(8.5, "32", "int8", "fp16"),
    "Q6_K": Format(6.5625, _K, "6-bit int", "8-bit, fp16 per super-block"),
    "Q5_K": Format(5.5, _K, "5-bit int", "6-bit scale and min, fp16 per super-block"),
    "Q4_K": Format(4.5, _K, "4-bit int", "6-bit scale and min, fp16 per super-block"),
    "Q4_0": Format(4.5, "32", "4-bit int", "fp16"),
    "NVFP4": Format(4.5, "16", "FP4 E2M1", "FP8 E4M3, and fp32 per tensor"),
    "MXFP4": Format(4.25, "32", "FP4 E2M1", "E8M0 (a power of two)"),
    "int4-g128": Format(
        4 + 20 / 128, "128", "4-bit int", "fp16 and a 4-bit zero point", _RTN_OR_CALIBRATED
    ),
    "Q3_K": Format(3.4375, _K, "3-bit int", "6-bit, fp16 per super-block"),
    "Q2_K": Format(2.625, _K, "2-bit int", "4-bit scale and min, fp16 per super-block"),
    "int8": Format(8.0, "-", "int8", "not counted"),
    "int4": Format(4.0, "-", "4-bit int", "not counted"),
}


def decode_tokens_per_second(
    weight_bytes: float, bandwidth: float, kv_bytes: float = 0.0, batch: int = 1
) -> float:
    """An upper bound on each sequence's decoding speed when memory bandwidth is the limit.

    One decode step produces one token for each of ``batch`` sequences. It reads every weight
    once, whatever the batch, and each sequence's whole KV cache (``kv_bytes`` per sequence), so
    a step takes at least ``(weight_bytes + batch · kv_bytes) / bandwidth`` seconds. Reading, not
    arithmetic, is the limit until the batch is large (weight-only formats are expanded back to
    floats after reading). The batch's total is ``batch`` times the result. Real engines reach a
    fraction of it: kernels do not run at peak bandwidth.

    Example:
        >>> round(decode_tokens_per_second(16e9, bandwidth=1e12))  # 16 GB of weights at 1 TB/s
        62
        >>> round(decode_tokens_per_second(16e9, 1e12, kv_bytes=2e9, batch=8))  # per sequence
        31
    """
    if weight_bytes <= 0 or bandwidth <= 0 or kv_bytes < 0 or batch < 1:
        raise ValueError("weight_bytes and bandwidth must be > 0, kv_bytes >= 0 and batch >= 1")
    return float(bandwidth) / (float(weight_bytes) + int(batch) * float(kv_bytes))


def model_size(n_params: int, fmt: str, unquantized: int = 0) -> int:
    """Bytes to store ``n_params`` weights in format ``fmt`` (see :data:`FORMATS`), of which
    ``unquantized`` stay in 16 bits.

    Quantized checkpoints rarely quantize everything: GPTQ and AWQ checkpoints keep the token
    embeddings and the output layer (``lm_head``) in fp16, which for a model with a large
    vocabulary and untied embeddings is a large share. Llama-3.1-8B's two are 128,256 × 4,096
    each, 1.05 billion of its 8.03 billion weights.

    Example:
        >>> model_size(8_000_000_000, "Q4_0") / 1e9
        4.5
        >>> round(model_size(8_030_000_000, "int4-g128", unquantized=2 * 128_256 * 4_096) / 1e9, 2)
        5.73
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    for name, value in (("n_params", n_params), ("unquantized", unquantized)):
        if int(value) != value or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if unquantized > n_params:
        raise ValueError(f"unquantized ({unquantized:,}) is more than n_params ({n_params:,})")
    quantized = n_params - unquantized
    return round(quantized * FORMATS[fmt].bits_per_weight / 8) + 2 * int(unquantized)
