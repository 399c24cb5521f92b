"""llama.cpp's legacy block formats Q8_0 and Q4_0, bit for bit with its reference code."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from promptdojo.quantization.uniform import _weights

QK = 32  # llama.cpp's block size for Q8_0 and Q4_0


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
