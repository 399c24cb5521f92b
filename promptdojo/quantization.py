"""Quantization: store weights as few-bit integers plus scales, and measure what that costs.

Schemes and the semantics they follow:

* :func:`quantize_symmetric`: absmax, ``scale = max|w| / (2**(bits-1) - 1)``, codes rounded half to
  even (``numpy.rint``, like ``torch.round``);
* :func:`quantize_asymmetric`: PyTorch's ``MinMaxObserver`` affine scheme: the range is widened to
  include 0, ``scale = (max - min) / (2**bits - 1)``, ``zero_point = -round(min / scale)``, codes
  in ``[0, 2**bits - 1]``, rounding half to even;
* granularity for both: per tensor (``axis=None``), per channel (``axis=k``: one scale per index
  along axis k) or group-wise (``group_size=g``: one scale per g consecutive weights of the last
  axis);
* :func:`quantize_q8_0` / :func:`quantize_q4_0`: llama.cpp's reference block formats, bit for bit
  (``quantize_row_q8_0_ref`` / ``quantize_row_q4_0_ref``).

Example:
    >>> import numpy as np
    >>> w = np.array([0.5, -1.0, 0.25, 0.0])
    >>> q = quantize_symmetric(w, bits=8)
    >>> q.codes.tolist(), round(q.scale.item(), 6)
    ([64, -127, 32, 0], 0.007874)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "FORMATS",
    "BlockQuantized",
    "QuantizedTensor",
    "dequantize_q4_0",
    "dequantize_q8_0",
    "error_report",
    "max_abs_error",
    "model_size",
    "mse",
    "pack_int4",
    "quantize_asymmetric",
    "quantize_q4_0",
    "quantize_q8_0",
    "quantize_symmetric",
    "snr_db",
    "unpack_int4",
]

QK = 32  # llama.cpp's block size for Q8_0 and Q4_0


def _weights(w: object) -> np.ndarray:
    array = np.asarray(w)
    if array.dtype.kind not in "fiu":
        raise TypeError(f"weights must be numbers, got dtype {array.dtype}")
    array = array.astype(np.float32 if array.dtype == np.float32 else np.float64, copy=False)
    if array.size == 0:
        raise ValueError("weights are empty")
    if not np.isfinite(array).all():
        raise ValueError("weights contain NaN or infinity")
    return array


def _bits(bits: int) -> int:
    if isinstance(bits, bool) or int(bits) != bits or not 2 <= bits <= 8:
        raise ValueError(f"bits must be a whole number from 2 to 8, got {bits!r}")
    return int(bits)


def _grouped(w: np.ndarray, axis: int | None, group_size: int | None) -> tuple[np.ndarray, tuple]:
    """View ``w`` so that one reduction over the returned axes gives one scale per group."""
    if axis is not None and group_size is not None:
        raise ValueError("pass either axis (per channel) or group_size (group-wise), not both")
    if group_size is not None:
        if int(group_size) != group_size or group_size < 1:
            raise ValueError(f"group_size must be a whole number >= 1, got {group_size!r}")
        if w.shape[-1] % group_size:
            raise ValueError(
                f"the last axis ({w.shape[-1]}) is not a multiple of group_size ({group_size})"
            )
        return w.reshape(*w.shape[:-1], w.shape[-1] // group_size, int(group_size)), (-1,)
    if axis is None:
        return w, tuple(range(w.ndim))
    if not -w.ndim <= axis < w.ndim:
        raise ValueError(f"axis {axis} is out of range for weights of shape {w.shape}")
    keep = axis % w.ndim
    return w, tuple(i for i in range(w.ndim) if i != keep)


@dataclass(frozen=True)
class QuantizedTensor:
    """Integer codes plus the scale (and zero point) that map them back to floats.

    Example:
        >>> q = quantize_symmetric(np.ones((4, 64)), bits=4, group_size=32)
        >>> q.codes.shape, q.scale.shape, q.bits_per_weight
        ((4, 2, 32), (4, 2, 1), 4.5)
    """

    codes: np.ndarray
    scale: np.ndarray
    zero_point: np.ndarray | None
    bits: int
    shape: tuple[int, ...]
    group_size: int | None = None

    def dequantize(self) -> np.ndarray:
        """Floats again: ``(codes - zero_point) * scale``, in the original shape."""
        codes = self.codes.astype(np.float64)
        if self.zero_point is not None:
            codes = codes - self.zero_point
        return (codes * self.scale).reshape(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes with codes packed at ``bits`` per weight, scales in fp16, zero points in 1 byte."""
        code_bytes = -(-int(np.prod(self.shape)) * self.bits // 8)
        meta = self.scale.size * 2 + (self.zero_point.size if self.zero_point is not None else 0)
        return code_bytes + meta

    @property
    def bits_per_weight(self) -> float:
        """Bits of storage per weight, scales included."""
        return 8 * self.nbytes / int(np.prod(self.shape))


def quantize_symmetric(
    w: object, bits: int = 8, axis: int | None = None, group_size: int | None = None
) -> QuantizedTensor:
    """Absmax quantization: ``codes = rint(w / scale)``, ``scale = max|w| / (2**(bits-1) - 1)``.

    Codes lie in ``[-(2**(bits-1) - 1), 2**(bits-1) - 1]``; the dequantization error of each weight
    is at most ``scale / 2``. An all-zero group gets scale 1.

    Example:
        >>> q = quantize_symmetric([[1.0, -2.0], [0.5, 0.25]], bits=4, axis=0)
        >>> q.codes.tolist()
        [[4, -7], [7, 4]]
    """
    array = _weights(w)
    b = _bits(bits)
    grouped, reduce_axes = _grouped(array, axis, group_size)
    qmax = 2 ** (b - 1) - 1
    absmax = np.maximum(
        grouped.max(axis=reduce_axes, keepdims=True), -grouped.min(axis=reduce_axes, keepdims=True)
    )
    scale = np.where(absmax > 0, absmax / qmax, 1.0).astype(array.dtype)
    codes = np.divide(grouped, scale, dtype=array.dtype)
    # |w| <= absmax = qmax * scale, so the rounded codes already lie in [-qmax, qmax]: no clip.
    np.rint(codes, out=codes)
    return QuantizedTensor(
        codes=codes.astype(np.int8),
        scale=scale,
        zero_point=None,
        bits=b,
        shape=array.shape,
        group_size=group_size,
    )


def quantize_asymmetric(
    w: object, bits: int = 8, axis: int | None = None, group_size: int | None = None
) -> QuantizedTensor:
    """Affine quantization as PyTorch's ``MinMaxObserver`` (``torch.per_tensor_affine``) does it.

    The observed range is widened to include 0, then ``scale = (max - min) / (2**bits - 1)`` (at
    least float32 eps), ``zero_point = clamp(-rint(min / scale), 0, 2**bits - 1)`` and
    ``codes = clamp(rint(w / scale) + zero_point, 0, 2**bits - 1)``.

    Example:
        >>> q = quantize_asymmetric([0.0, 1.0, 2.0, 3.0], bits=2)
        >>> q.codes.tolist(), q.zero_point.item()
        ([0, 1, 2, 3], 0)
    """
    array = _weights(w)
    b = _bits(bits)
    grouped, reduce_axes = _grouped(array, axis, group_size)
    qmax = 2**b - 1
    low = np.minimum(grouped.min(axis=reduce_axes, keepdims=True), 0.0)
    high = np.maximum(grouped.max(axis=reduce_axes, keepdims=True), 0.0)
    scale = np.maximum((high - low) / qmax, np.finfo(np.float32).eps)
    zero_point = np.clip(-np.rint(low / scale), 0, qmax)
    codes = np.clip(np.rint(grouped / scale) + zero_point, 0, qmax)
    return QuantizedTensor(
        codes=codes.astype(np.uint8),
        scale=scale,
        zero_point=zero_point.astype(np.int32),
        bits=b,
        shape=array.shape,
        group_size=group_size,
    )


def pack_int4(codes: object) -> np.ndarray:
    """Pack 4-bit codes two per byte: element ``2i`` in the low nibble, ``2i+1`` in the high one.

    Codes may be unsigned (0..15) or signed (-8..7; stored two's-complement in the nibble). An odd
    count is padded with a zero nibble.

    Example:
        >>> pack_int4([1, 2, 15]).tolist()
        [33, 15]
    """
    array = np.asarray(codes).ravel()
    if array.size and (array.min() < -8 or array.max() > 15):
        raise ValueError("int4 codes must lie in -8..7 (signed) or 0..15 (unsigned)")
    nibbles = (array.astype(np.int16) & 0xF).astype(np.uint8)
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8)


def unpack_int4(packed: object, count: int, signed: bool = False) -> np.ndarray:
    """Undo :func:`pack_int4`: ``count`` codes, as -8..7 when ``signed`` else 0..15.

    Example:
        >>> unpack_int4(pack_int4([-8, 7, -1]), 3, signed=True).tolist()
        [-8, 7, -1]
    """
    data = np.asarray(packed, dtype=np.uint8)
    nibbles = np.empty(data.size * 2, dtype=np.int16)
    nibbles[0::2] = data & 0xF
    nibbles[1::2] = data >> 4
    nibbles = nibbles[:count]
    if signed:
        nibbles = np.where(nibbles >= 8, nibbles - 16, nibbles)
    return nibbles.astype(np.int8)


@dataclass(frozen=True)
class BlockQuantized:
    """A llama.cpp block format: fp16 scales ``d`` per block of 32, and the blocks' bytes.

    Example:
        >>> q = quantize_q4_0(np.zeros(64))
        >>> q.d.shape, q.qs.shape, q.nbytes
        ((2,), (2, 16), 36)
    """

    kind: str
    d: np.ndarray
    qs: np.ndarray
    shape: tuple[int, ...]

    @property
    def block_bytes(self) -> int:
        """Bytes of one block: 34 for Q8_0 (fp16 d + 32 int8), 18 for Q4_0 (fp16 d + 16 bytes)."""
        return 2 + self.qs.shape[-1]

    @property
    def nbytes(self) -> int:
        """Bytes of all blocks."""
        return self.d.size * self.block_bytes

    @property
    def bits_per_weight(self) -> float:
        """8.5 for Q8_0, 4.5 for Q4_0."""
        return 8 * self.block_bytes / QK

    def dequantize(self) -> np.ndarray:
        """Floats again, as llama.cpp's ``dequantize_row_*`` computes them."""
        return (dequantize_q8_0 if self.kind == "Q8_0" else dequantize_q4_0)(self)


def _blocks(w: object) -> tuple[np.ndarray, tuple[int, ...]]:
    array = _weights(w).astype(np.float32)
    if array.size % QK:
        raise ValueError(f"llama.cpp blocks need a multiple of {QK} weights, got {array.size}")
    return array.reshape(-1, QK), array.shape


def quantize_q8_0(w: object) -> BlockQuantized:
    """llama.cpp Q8_0: per block of 32, ``d = amax / 127`` stored as fp16, ``qs = roundf(x / d)``.

    ``roundf`` rounds half away from zero. Codes are computed with the float32 ``d``, as the
    reference does, before ``d`` is stored in fp16.

    Example:
        >>> q = quantize_q8_0(np.linspace(-1, 1, 32))
        >>> q.qs[0, [0, 16, 31]].tolist(), q.block_bytes, q.bits_per_weight
        ([-127, 4, 127], 34, 8.5)
    """
    blocks, shape = _blocks(w)
    amax = np.abs(blocks).max(axis=1)
    d = amax / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    scaled = blocks * inv[:, None]
    qs = (np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))).astype(np.int8)
    return BlockQuantized("Q8_0", d.astype(np.float16), qs, shape)


def dequantize_q8_0(q: BlockQuantized) -> np.ndarray:
    """``qs * d`` per block (``dequantize_row_q8_0``), with ``d`` read back from fp16.

    Example:
        >>> w = np.linspace(-1, 1, 32)
        >>> float(np.abs(dequantize_q8_0(quantize_q8_0(w)) - w).max()) < 1 / 127
        True
    """
    return (q.qs.astype(np.float32) * q.d.astype(np.float32)[:, None]).reshape(q.shape)


def quantize_q4_0(w: object) -> BlockQuantized:
    """llama.cpp Q4_0: per block of 32, ``d = max / -8`` where ``max`` is the signed value of
    largest magnitude (the first one on ties), codes ``min(15, trunc(x / d + 8.5))``.

    Byte ``j`` of a block holds element ``j`` in its low nibble and element ``j + 16`` in its high
    nibble, as in llama.cpp.

    Example:
        >>> q = quantize_q4_0(np.linspace(-1, 1, 32))
        >>> float(q.d[0]), q.block_bytes, q.bits_per_weight
        (0.125, 18, 4.5)
    """
    blocks, shape = _blocks(w)
    first_max = np.argmax(np.abs(blocks), axis=1)
    signed_max = blocks[np.arange(blocks.shape[0]), first_max]
    d = signed_max / np.float32(-8)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    codes = np.minimum(15, np.trunc(blocks * inv[:, None] + np.float32(8.5))).astype(np.uint8)
    half = QK // 2
    qs = (codes[:, :half] | (codes[:, half:] << 4)).astype(np.uint8)
    return BlockQuantized("Q4_0", d.astype(np.float16), qs, shape)


def dequantize_q4_0(q: BlockQuantized) -> np.ndarray:
    """``(code - 8) * d`` per weight (``dequantize_row_q4_0``).

    Example:
        >>> w = np.linspace(-1, 1, 32)
        >>> float(dequantize_q4_0(quantize_q4_0(w))[0])  # the extreme lands exactly on code 0
        -1.0
    """
    low = (q.qs & 0x0F).astype(np.int16) - 8
    high = (q.qs >> 4).astype(np.int16) - 8
    codes = np.concatenate([low, high], axis=1).astype(np.float32)
    return (codes * q.d.astype(np.float32)[:, None]).reshape(q.shape)


def mse(w: object, w_hat: object) -> float:
    """Mean squared error between weights and their dequantized copy.

    Example:
        >>> mse([1.0, 2.0], [1.0, 1.5])
        0.125
    """
    a, b = np.asarray(w, dtype=np.float64), np.asarray(w_hat, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    return float(np.mean((a - b) ** 2))


def snr_db(w: object, w_hat: object) -> float:
    """Signal-to-noise ratio in dB: ``10 log10(sum w² / sum (w - w_hat)²)``; ``inf`` if exact.

    Example:
        >>> round(snr_db([1.0, -1.0], [1.1, -1.1]), 1)
        20.0
    """
    a, b = np.asarray(w, dtype=np.float64), np.asarray(w_hat, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    noise = float(np.sum((a - b) ** 2))
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(a**2) / noise))


def max_abs_error(w: object, w_hat: object) -> float:
    """Largest per-weight error ``max |w - w_hat|``.

    Example:
        >>> max_abs_error([1.0, 2.0], [1.25, 2.0])
        0.25
    """
    a, b = np.asarray(w, dtype=np.float64), np.asarray(w_hat, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    return float(np.max(np.abs(a - b)))


def error_report(w: object, w_hat: object) -> dict[str, float]:
    """MSE, SNR (dB) and maximum absolute error in one dict.

    Example:
        >>> error_report([1.0, -1.0], [1.1, -1.1])["max_abs"] == max_abs_error([1.0], [1.1])
        True
    """
    return {"mse": mse(w, w_hat), "snr_db": snr_db(w, w_hat), "max_abs": max_abs_error(w, w_hat)}


#: Bits per weight of common storage formats (llama.cpp block formats include their fp16 scales).
FORMATS: dict[str, float] = {
    "fp32": 32.0,
    "fp16": 16.0,
    "bf16": 16.0,
    "Q8_0": 8.5,
    "Q4_0": 4.5,
    "int8": 8.0,
    "int4": 4.0,
}


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
