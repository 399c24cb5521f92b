"""The numeric building blocks of :mod:`promptdojo.tinylm.model`, as plain numpy functions.

Each takes a whole sequence at once: ``(T, d)`` rows for norms and projections, ``(heads, T,
head_dim)`` for rotary positions, so a forward pass is a few matrix operations per layer, never
a loop over tokens.

Example:
    >>> import numpy as np
    >>> x = np.array([[3.0, 4.0]])
    >>> rms_norm(x, np.ones(2), eps=0.0).round(3).tolist()
    [[0.849, 1.131]]
    >>> matmul(np.eye(2), x.T).tolist()
    [[3.0], [4.0]]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["has_blas", "matmul", "rms_norm", "rope", "rope_tables", "silu"]


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm over the last axis, then a per-feature ``weight``."""
    # sum / n is what np.mean computes, without its Python-level wrapper (one call per token).
    mean_square = np.add.reduce(x * x, axis=-1, keepdims=True) / x.shape[-1]
    return x / np.sqrt(mean_square + eps) * weight


def silu(x: np.ndarray) -> np.ndarray:
    """``x · sigmoid(x)``, the gate of a SwiGLU block."""
    return x / (1.0 + np.exp(-x))


def has_blas() -> bool:
    """Whether numpy was built with a BLAS library: CPython's wheels are, Pyodide's is not."""
    try:
        return bool(np.show_config(mode="dicts")["Build Dependencies"]["blas"].get("found"))
    except (AttributeError, KeyError, TypeError):  # another numpy layout: einsum is always right
        return False


#: From this many rows on, :func:`_einsum_matmul` multiplies against a transposed copy of ``w``.
_ROWS_FOR_TRANSPOSE = 16


def _einsum_matmul(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    if x.shape[0] < _ROWS_FOR_TRANSPOSE:  # a decode step: copying ``w`` would cost more
        return np.einsum("ij,jk->ik", x, w)
    # Each output is then a dot product of two contiguous rows, einsum's fastest loop: 1.2-2x
    # faster than striding down ``w``'s columns, for a copy of ``w`` that costs a few percent.
    return np.einsum("ik,jk->ij", x, np.ascontiguousarray(w.T))


#: ``x @ w`` for a ``(T, d_in)`` batch of rows. Without BLAS (Pyodide), numpy's ``matmul`` is a
#: naive loop that strides down the columns of ``w``, and its einsum loops are faster; with
#: BLAS, ``matmul`` is the fast one. Both compute the same sums (to float rounding).
matmul: Callable[[np.ndarray, np.ndarray], np.ndarray] = np.matmul if has_blas() else _einsum_matmul


def rope_tables(
    positions: np.ndarray, head_dim: int, theta: float, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """``cos`` and ``sin`` of every position's rotation angles, ``(T, head_dim)`` each."""
    half = head_dim // 2
    inv_freq = 1.0 / theta ** (np.arange(0, half, dtype=np.float64) * 2 / head_dim)
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=-1)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate ``(heads, T, head_dim)`` by position, Hugging Face Llama's ``rotate_half`` layout."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin
