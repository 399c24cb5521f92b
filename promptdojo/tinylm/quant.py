"""Weight quantization for the tiny model: each matrix through a scheme and back to floats."""

from __future__ import annotations

import numpy as np

from promptdojo import quantization

__all__ = ["QUANT_SCHEMES", "fake_quantize"]


def fake_quantize(rows: np.ndarray, scheme: str) -> np.ndarray:
    """Quantize then dequantize ``rows``: one row per output channel (or per embedded token), so
    per-channel scales, groups and llama.cpp blocks all run along a row, as in llama.cpp.

    Example:
        >>> rows = np.array([[0.1, -0.2] * 16])
        >>> bool(np.abs(fake_quantize(rows, "int8-tensor") - rows).max() <= 0.2 / 127 / 2)
        True
    """
    if scheme == "Q8_0":
        return quantization.quantize_q8_0(rows).dequantize().astype(rows.dtype)
    if scheme == "Q4_0":
        return quantization.quantize_q4_0(rows).dequantize().astype(rows.dtype)
    if scheme == "NVFP4":
        return quantization.quantize_nvfp4(rows).dequantize().astype(rows.dtype)
    if scheme == "MXFP4":
        return quantization.quantize_mxfp4(rows).dequantize().astype(rows.dtype)
    bits, _, granularity = scheme.removeprefix("int").partition("-")
    kwargs: dict[str, int] = {}
    if granularity == "channel":
        kwargs["channel_axis"] = 0
    elif granularity.startswith("g"):
        kwargs["group_size"] = int(granularity[1:])
    q = quantization.quantize_symmetric(rows, bits=int(bits), **kwargs)
    return q.dequantize().astype(rows.dtype)


#: Weight-quantization schemes :meth:`TinyLM.quantized` understands: ``intB-tensor`` (one scale
#: per matrix), ``intB-channel`` (one per output row), ``int4-g32`` (one per 32 weights of a row)
#: llama.cpp's ``Q8_0`` and ``Q4_0``, and the FP4 formats of GPU serving, ``NVFP4`` (blocks of 16)
#: and ``MXFP4`` (blocks of 32), each block along a row.
QUANT_SCHEMES: tuple[str, ...] = (
    "int8-tensor",
    "int8-channel",
    "Q8_0",
    "int4-g32",
    "Q4_0",
    "NVFP4",
    "MXFP4",
    "int4-channel",
    "int4-tensor",
)
