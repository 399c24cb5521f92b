"""Low-precision float formats as GPU serving ships them: FP8, NVFP4 and MXFP4, in numpy.

* :func:`round_to_float` rounds to a small float format (round to nearest, ties to even, with
  subnormals), saturating at its largest finite value: :data:`E4M3` (FP8, max 448) and
  :data:`E2M1` (FP4: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives).
* :func:`quantize_fp8`: E4M3 codes with an fp32 scale per tensor, per output channel (row), or per
  128×128 block (DeepSeek-V3's recipe), ``scale = amax / 448``.
* :func:`quantize_nvfp4`: E2M1 codes in blocks of 16 along a row, each block's scale stored in E4M3
  and a second, per-tensor fp32 scale ``amax / (448 · 6)`` that keeps the block scales in E4M3's
  range (NVIDIA's NVFP4).
* :func:`quantize_mxfp4`: E2M1 codes in blocks of 32 with a power-of-two (E8M0) scale,
  ``2 ** (floor(log2(amax)) - 2)`` as the OCP Microscaling spec computes it; values above 6 steps
  saturate.

All of them round each weight to its nearest code (round-to-nearest); calibrated methods (GPTQ,
AWQ) keep the storage format and choose codes or scales against sample activations instead.

Example:
    >>> round_to_float(np.array([0.3, 2.4, 5.2, 7.0]), E2M1).tolist()
    [0.5, 2.0, 6.0, 6.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "E2M1",
    "E4M3",
    "FloatFormat",
    "FloatQuantized",
    "quantize_fp8",
    "quantize_mxfp4",
    "quantize_nvfp4",
    "round_to_float",
]


@dataclass(frozen=True)
class FloatFormat:
    """A small float: mantissa bits, the smallest normal exponent and the largest finite value."""

    name: str
    mantissa_bits: int
    min_exponent: int
    max_value: float


#: FP8 E4M3 as ``torch.float8_e4m3fn``: 3 mantissa bits, normals from 2**-6, max 448.
E4M3 = FloatFormat("E4M3", 3, -6, 448.0)
#: FP4 E2M1 (OCP MX and NVFP4 elements): 1 mantissa bit, normals from 1, max 6.
E2M1 = FloatFormat("E2M1", 1, 0, 6.0)


def round_to_float(x: object, fmt: FloatFormat) -> np.ndarray:
    """``x`` rounded to the nearest value of ``fmt`` (ties to even), saturating at its max.

    Example:
        >>> round_to_float(np.array([449.0, 0.1, 17.0]), E4M3).tolist()
        [448.0, 0.1015625, 16.0]
    """
    a = np.abs(np.asarray(x, dtype=np.float64))
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    step = np.exp2(np.maximum(exponent, fmt.min_exponent) - fmt.mantissa_bits)
    rounded = np.minimum(np.rint(a / step) * step, fmt.max_value)
    return np.copysign(rounded, np.asarray(x, dtype=np.float64))


@dataclass(frozen=True)
class FloatQuantized:
    """Float codes and the scale each weight is multiplied by to come back (one per weight here,
    broadcast from its block), with the storage cost of the format."""

    codes: np.ndarray
    scales: np.ndarray
    bits_per_weight: float
    format: str

    def dequantize(self) -> np.ndarray:
        """Codes times scales, in the original shape."""
        return self.codes * self.scales


def _matrix(w: object) -> np.ndarray:
    array = np.asarray(w, dtype=np.float64)
    if array.ndim != 2 or array.size == 0:
        raise ValueError(
            f"weights must be a non-empty matrix (rows, cols), got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise ValueError("weights contain NaN or infinity")
    return array


def _blocks_of(w: np.ndarray, size: int) -> np.ndarray:
    if w.shape[1] % size:
        raise ValueError(f"rows of {w.shape[1]} weights do not split into blocks of {size}")
    return w.reshape(w.shape[0], w.shape[1] // size, size)


def _safe(scale: np.ndarray) -> np.ndarray:
    return np.where(scale > 0, scale, 1.0)


def quantize_fp8(w: object, granularity: str = "tensor") -> FloatQuantized:
    """FP8 E4M3 codes with fp32 scales ``amax / 448``: per ``"tensor"``, per ``"channel"`` (one
    per row) or per ``"block"`` of 128×128 weights (edge blocks smaller).

    Example:
        >>> q = quantize_fp8(np.array([[1.0, -0.3], [0.02, 2.0]]), "channel")
        >>> q.dequantize().round(4).tolist()
        [[1.0, -0.2857], [0.0201, 2.0]]
    """
    m = _matrix(w)
    if granularity == "tensor":
        amax = np.full(m.shape, np.abs(m).max())
        extra = 32
    elif granularity == "channel":
        amax = np.repeat(np.abs(m).max(axis=1, keepdims=True), m.shape[1], axis=1)
        extra = 32 * m.shape[0]
    elif granularity == "block":
        amax = np.empty_like(m)
        for i in range(0, m.shape[0], 128):
            for j in range(0, m.shape[1], 128):
                amax[i : i + 128, j : j + 128] = np.abs(m[i : i + 128, j : j + 128]).max()
        extra = 32 * (-(-m.shape[0] // 128)) * (-(-m.shape[1] // 128))
    else:
        raise ValueError(f"granularity must be 'tensor', 'channel' or 'block', got {granularity!r}")
    scales = _safe(amax / E4M3.max_value)
    codes = round_to_float(m / scales, E4M3)
    return FloatQuantized(codes, scales, 8 + extra / m.size, f"FP8 ({granularity})")


def quantize_nvfp4(w: object) -> FloatQuantized:
    """NVFP4: E2M1 codes in blocks of 16 along each row, an E4M3 scale per block, and one fp32
    scale per tensor, ``amax / (448 · 6)``, by which the block scales are divided before they are
    rounded to E4M3. 4.5 bits per weight, plus 32 bits per tensor.

    Example:
        >>> q = quantize_nvfp4(np.linspace(-1.0, 1.0, 16)[None, :])
        >>> round(float(np.abs(q.dequantize() - np.linspace(-1.0, 1.0, 16)).max()), 4)
        0.1333
    """
    m = _matrix(w)
    blocks = _blocks_of(m, 16)
    global_scale = np.abs(m).max() / (E4M3.max_value * E2M1.max_value)
    global_scale = global_scale if global_scale > 0 else 1.0
    block_amax = np.abs(blocks).max(axis=-1, keepdims=True)
    block_scale = round_to_float(block_amax / E2M1.max_value / global_scale, E4M3)
    scales = _safe(block_scale * global_scale)
    codes = round_to_float(blocks / scales, E2M1)
    full = np.broadcast_to(scales, blocks.shape).reshape(m.shape)
    return FloatQuantized(codes.reshape(m.shape), full, 4.5 + 32 / m.size, "NVFP4")


def quantize_mxfp4(w: object) -> FloatQuantized:
    """MXFP4 (OCP Microscaling): E2M1 codes in blocks of 32 along each row, each block's scale a
    power of two stored in 8 bits (E8M0): ``2 ** (floor(log2(amax)) - 2)``, 2 being E2M1's
    largest exponent. The block's largest weight then lands between 4 and 8 steps, and anything
    above 6 saturates. 4.25 bits per weight.

    Example:
        >>> q = quantize_mxfp4(np.full((1, 32), 0.75))
        >>> float(q.scales[0, 0]), float(q.dequantize()[0, 0])
        (0.125, 0.75)
    """
    m = _matrix(w)
    blocks = _blocks_of(m, 32)
    block_amax = np.abs(blocks).max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log2(np.where(block_amax > 0, block_amax, 1.0))) - 2
    scales = np.exp2(np.clip(exponent, -127, 127))
    codes = round_to_float(blocks / scales, E2M1)
    full = np.broadcast_to(scales, blocks.shape).reshape(m.shape)
    return FloatQuantized(codes.reshape(m.shape), full, 4.25, "MXFP4")
