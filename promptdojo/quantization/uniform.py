"""Uniform integer quantization: symmetric (absmax) and asymmetric (min-max) codes at any
granularity, and int4 packing. See :mod:`promptdojo.quantization` for the semantics followed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def _grouped(
    w: np.ndarray, channel_axis: int | None, group_size: int | None
) -> tuple[np.ndarray, tuple]:
    """View ``w`` so that one reduction over the returned axes gives one scale per group."""
    axis = channel_axis
    if axis is not None and group_size is not None:
        raise ValueError(
            "pass either channel_axis (one scale per channel) or group_size (group-wise), not both"
        )
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
        raise ValueError(f"channel_axis {axis} is out of range for weights of shape {w.shape}")
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
    w: object, bits: int = 8, channel_axis: int | None = None, group_size: int | None = None
) -> QuantizedTensor:
    """Absmax quantization: ``codes = rint(w / scale)``, ``scale = max|w| / (2**(bits-1) - 1)``.

    Codes lie in ``[-(2**(bits-1) - 1), 2**(bits-1) - 1]``; the dequantization error of each weight
    is at most ``scale / 2``. An all-zero group gets scale 1. Who shares a scale: the whole tensor
    (default), each channel (``channel_axis=0``: one scale per row, i.e. per output of a
    ``(out, in)`` matrix), or each group of ``group_size`` consecutive weights along a row.

    Example:
        >>> q = quantize_symmetric([[1.0, -2.0], [0.5, 0.25]], bits=4, channel_axis=0)
        >>> q.codes.tolist()
        [[4, -7], [7, 4]]
    """
    array = _weights(w)
    b = _bits(bits)
    grouped, reduce_axes = _grouped(array, channel_axis, group_size)
    qmax = 2 ** (b - 1) - 1
    absmax = np.maximum(
        grouped.max(axis=reduce_axes, keepdims=True), -grouped.min(axis=reduce_axes, keepdims=True)
    )
    scale = np.where(absmax > 0, absmax / qmax, 1.0).astype(array.dtype)
    # A group of subnormal weights (|w| ~ 1e-320) gives a scale that underflows to 0: use the
    # smallest step the type has instead of dividing by zero.
    scale[scale == 0] = np.finfo(array.dtype).smallest_subnormal
    codes = np.divide(grouped, scale, dtype=array.dtype)
    # |w| <= absmax = qmax * scale, so the rounded codes lie in [-qmax, qmax] (the clip only
    # matters for that smallest step).
    np.clip(np.rint(codes, out=codes), -qmax, qmax, out=codes)
    return QuantizedTensor(
        codes=codes.astype(np.int8),
        scale=scale,
        zero_point=None,
        bits=b,
        shape=array.shape,
        group_size=group_size,
    )


def quantize_asymmetric(
    w: object, bits: int = 8, channel_axis: int | None = None, group_size: int | None = None
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
    grouped, reduce_axes = _grouped(array, channel_axis, group_size)
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
