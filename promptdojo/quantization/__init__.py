"""Quantization: store weights as few-bit integers plus scales, and measure what that costs.

Schemes and the semantics they follow:

* :func:`quantize_symmetric`: absmax, ``scale = max|w| / (2**(bits-1) - 1)``, codes rounded half to
  even (``numpy.rint``, like ``torch.round``);
* :func:`quantize_asymmetric`: PyTorch's ``MinMaxObserver`` affine scheme: the range is widened to
  include 0, ``scale = (max - min) / (2**bits - 1)``, ``zero_point = -round(min / scale)``, codes
  in ``[0, 2**bits - 1]``, rounding half to even;
* granularity for both: per tensor (the default), per channel (``channel_axis=k``: one scale per
  index along axis k, so ``channel_axis=0`` gives one scale per row) or group-wise
  (``group_size=g``: one scale per g consecutive weights of the last axis);
* :func:`quantize_q8_0` / :func:`quantize_q4_0`: llama.cpp's reference block formats, bit for bit
  (``quantize_row_q8_0_ref`` / ``quantize_row_q4_0_ref``);
* :func:`quantize_fp8`, :func:`quantize_nvfp4`, :func:`quantize_mxfp4`: the float formats of GPU
  serving, with their real blocks and scale formats (:mod:`promptdojo.quantization.floats`);
* :func:`quantize_gptq`: calibrated int codes (GPTQ), the same storage as round-to-nearest;
* :data:`FORMATS`: each format's bits per weight, block, element and scale types, and whether its
  codes are rounded to nearest or calibrated.

Example:
    >>> import numpy as np
    >>> w = np.array([0.5, -1.0, 0.25, 0.0])
    >>> q = quantize_symmetric(w, bits=8)
    >>> q.codes.tolist(), round(q.scale.item(), 6)
    ([64, -127, 32, 0], 0.007874)
"""

from __future__ import annotations

from promptdojo.quantization.floats import (
    E2M1,
    E4M3,
    FloatQuantized,
    quantize_fp8,
    quantize_mxfp4,
    quantize_nvfp4,
    round_to_float,
)
from promptdojo.quantization.gptq import quantize_gptq
from promptdojo.quantization.llamacpp import (
    BlockQuantized,
    dequantize_q4_0,
    dequantize_q8_0,
    quantize_q4_0,
    quantize_q8_0,
)
from promptdojo.quantization.metrics import (
    FORMATS,
    Format,
    decode_tokens_per_second,
    error_report,
    max_abs_error,
    model_size,
    mse,
    snr_db,
)
from promptdojo.quantization.uniform import (
    QuantizedTensor,
    pack_int4,
    quantize_asymmetric,
    quantize_symmetric,
    unpack_int4,
)

__all__ = [
    "E2M1",
    "E4M3",
    "FORMATS",
    "BlockQuantized",
    "FloatQuantized",
    "Format",
    "QuantizedTensor",
    "decode_tokens_per_second",
    "dequantize_q4_0",
    "dequantize_q8_0",
    "error_report",
    "max_abs_error",
    "model_size",
    "mse",
    "pack_int4",
    "quantize_asymmetric",
    "quantize_fp8",
    "quantize_gptq",
    "quantize_mxfp4",
    "quantize_nvfp4",
    "quantize_q4_0",
    "quantize_q8_0",
    "quantize_symmetric",
    "round_to_float",
    "snr_db",
    "unpack_int4",
]
