"""What quantization costs: error measures, and the bytes a model takes in each format."""

from __future__ import annotations

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


#: Bits per weight of common storage formats. llama.cpp's formats include their scales: the legacy
#: Q8_0 and Q4_0 use blocks of 32 weights with one fp16 scale (34 and 18 bytes); the k-quants use
#: super-blocks of 256 weights (``block_q*_K`` in ggml's ``ggml-common.h``: Q2_K 84 bytes, Q3_K
#: 110, Q4_K 144, Q5_K 176, Q6_K 210). A file named Q4_K_M is a mix, not one format: most tensors
#: in Q4_K, some (parts of attn_v and ffn_down) in Q6_K, about 4.9 bits per weight over a Llama-3-8B
#: (llama.cpp's quantize tool lists it as 4.58 GiB). ``int8`` and ``int4`` are bare codes.
FORMATS: dict[str, float] = {
    "fp32": 32.0,
    "fp16": 16.0,
    "bf16": 16.0,
    "Q8_0": 8.5,
    "Q6_K": 6.5625,
    "Q5_K": 5.5,
    "Q4_K": 4.5,
    "Q4_0": 4.5,
    "Q3_K": 3.4375,
    "Q2_K": 2.625,
    "int8": 8.0,
    "int4": 4.0,
}


def decode_tokens_per_second(weight_bytes: float, bandwidth: float) -> float:
    """An upper bound on decoding speed when memory bandwidth is the limit.

    Generating one token reads every weight once (batch 1), and reading, not arithmetic, is the
    bottleneck (weight-only formats are expanded back to floats after reading), so the time per
    token is at least ``weight_bytes / bandwidth``: fewer bytes, more tokens per second. Real
    engines reach a fraction of it (the KV cache is read too, and kernels do not run at peak
    bandwidth).

    Example:
        >>> round(decode_tokens_per_second(16e9, bandwidth=1e12))  # 16 GB of weights at 1 TB/s
        62
    """
    if weight_bytes <= 0 or bandwidth <= 0:
        raise ValueError("weight_bytes and bandwidth must be > 0")
    return float(bandwidth) / float(weight_bytes)


def model_size(n_params: int, fmt: str) -> int:
    """Bytes to store ``n_params`` weights in format ``fmt`` (see :data:`FORMATS`).

    Example:
        >>> model_size(8_000_000_000, "Q4_0") / 1e9
        4.5
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if int(n_params) != n_params or n_params < 0:
        raise ValueError(f"n_params must be a whole number >= 0, got {n_params!r}")
    return round(n_params * FORMATS[fmt] / 8)
