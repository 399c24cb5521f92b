"""The KV cache: attention, the cache itself, what it saves in work, and what it costs in memory.

* :func:`attention` is scaled dot-product attention with a causal mask, for multi-head,
  grouped-query and multi-query layouts: query head ``h`` reads kv head
  ``h // (n_heads // n_kv_heads)``, as in Llama and Mistral.
* :class:`KVCache` holds keys and values per layer, grows by one position per generated token and
  reports its shape and bytes.
* :class:`CostCounter` counts multiply-adds, so cached decoding can be compared with recomputing
  the prefix by numbers, not by stopwatch: per token, the cache does the projections once and
  one attention row that grows with the length; recomputing redoes every position's projections
  (linear in the length) and the whole attention matrix (quadratic).
* :data:`MODELS` and :func:`kv_bytes_per_token` give the memory budget of real models:
  ``2 · layers · kv_heads · head_dim · bytes`` per token, times tokens and batch, with multi-head
  latent attention, sliding windows and linear-attention layers counted as they cache;
  :meth:`ModelConfig.from_hf_config` reads a model's ``config.json`` and refuses what it cannot
  size.
* :func:`paged_blocks`, :func:`kv_cache_budget`, :func:`kv_blocks_that_fit` and
  :func:`sessions_that_fit` do vLLM's paged-attention arithmetic.

The memory half lives in :mod:`promptdojo.kvmemory` and is re-exported here.

Example:
    >>> kv_bytes_per_token(MODELS["Llama-3-8B"]) // 1024
    128
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from promptdojo.kvmemory import (
    GB,
    GIB,
    MODELS,
    VLLM_GPU_MEMORY_UTILIZATION,
    CapacityError,
    ModelConfig,
    PagedLayout,
    UnsupportedAttention,
    fixed_state_bytes,
    format_bytes,
    kv_blocks_that_fit,
    kv_bytes_per_token,
    kv_cache_budget,
    kv_cache_bytes,
    paged_blocks,
    sessions_that_fit,
)

__all__ = [
    "GB",
    "GIB",
    "MODELS",
    "VLLM_GPU_MEMORY_UTILIZATION",
    "CapacityError",
    "CostCounter",
    "KVCache",
    "ModelConfig",
    "PagedLayout",
    "UnsupportedAttention",
    "attention",
    "causal_mask",
    "fixed_state_bytes",
    "format_bytes",
    "kv_blocks_that_fit",
    "kv_bytes_per_token",
    "kv_cache_budget",
    "kv_cache_bytes",
    "paged_blocks",
    "sessions_that_fit",
]


@dataclass
class CostCounter:
    """Multiply-adds spent, split into projections (weights) and attention (scores and mixing).

    Example:
        >>> counter = CostCounter()
        >>> kv = np.ones((2, 3, 4))
        >>> _ = attention(np.ones((2, 1, 4)), kv, kv, counter=counter)
        >>> counter.mark_step(); counter.attention_macs, counter.per_step()
        (48, [48])
    """

    projection_macs: int = 0
    attention_macs: int = 0
    steps: list[int] = field(default_factory=list)

    @property
    def total(self) -> int:
        """All multiply-adds counted so far."""
        return self.projection_macs + self.attention_macs

    def mark_step(self) -> None:
        """Close a generation step: remember the total so far, for per-token costs."""
        self.steps.append(self.total)

    def per_step(self) -> list[int]:
        """Multiply-adds of each step closed by :meth:`mark_step`."""
        return [b - a for a, b in zip([0, *self.steps[:-1]], self.steps, strict=True)]


def causal_mask(q_len: int, k_len: int) -> np.ndarray:
    """Boolean mask, True where query ``i`` may attend to key ``j``.

    Queries are the last ``q_len`` positions of ``k_len``, so a single new query (``q_len=1``)
    sees every cached key.

    Example:
        >>> causal_mask(2, 3).astype(int).tolist()
        [[1, 1, 0], [1, 1, 1]]
    """
    offset = k_len - q_len
    return np.arange(k_len)[None, :] <= (np.arange(q_len)[:, None] + offset)


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    causal: bool = True,
    counter: CostCounter | None = None,
    return_weights: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention over heads, with grouped-query sharing of kv heads.

    Shapes: ``q`` is ``(n_heads, q_len, head_dim)``; ``k`` and ``v`` are
    ``(n_kv_heads, k_len, head_dim)`` with ``n_heads`` a multiple of ``n_kv_heads`` (equal: multi-
    head; 1: multi-query). Returns ``(n_heads, q_len, head_dim)``, and the weights
    ``(n_heads, q_len, k_len)`` when ``return_weights``.

    Example:
        >>> q = np.ones((2, 1, 4)); k = np.zeros((1, 3, 4)); v = np.arange(3.0).reshape(1, 3, 1)
        >>> attention(q, k, np.repeat(v, 4, axis=2))[:, 0, 0].tolist()
        [1.0, 1.0]
    """
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    if q.ndim != 3 or k.ndim != 3 or v.ndim != 3:
        raise ValueError(
            f"q, k, v must be (heads, length, head_dim); got shapes {q.shape}, {k.shape}, {v.shape}"
        )
    n_heads, q_len, head_dim = q.shape
    n_kv, k_len, k_dim = k.shape
    if k.shape != v.shape or k_dim != head_dim:
        raise ValueError(f"k {k.shape} and v {v.shape} must match, with head_dim {head_dim}")
    if n_kv == 0 or n_heads % n_kv:
        raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv})")
    if causal and q_len > k_len:
        raise ValueError(f"causal attention needs q_len <= k_len, got {q_len} > {k_len}")
    group = n_heads // n_kv
    # (n_kv, group, q_len, head_dim): the query heads that share each kv head, side by side.
    qg = q.reshape(n_kv, group, q_len, head_dim)
    scores = np.matmul(qg, k[:, None].swapaxes(-1, -2)) / math.sqrt(head_dim)
    if causal:
        scores = np.where(causal_mask(q_len, k_len), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    out = np.matmul(weights, v[:, None]).reshape(n_heads, q_len, head_dim)
    if counter is not None:
        counter.attention_macs += 2 * n_heads * q_len * k_len * head_dim
    if return_weights:
        return out, weights.reshape(n_heads, q_len, k_len)
    return out


class KVCache:
    """Keys and values of every past position, per layer, grown one step at a time.

    Storage doubles when full, so appending is amortized O(1) and reading is a view.

    Example:
        >>> cache = KVCache(n_layers=2, n_kv_heads=2, head_dim=4, dtype=np.float16)
        >>> k = np.zeros((2, 3, 4))
        >>> for layer in range(2):
        ...     _ = cache.append(layer, k, k)
        >>> cache.shape, cache.nbytes
        ((2, 2, 2, 3, 4), 192)
    """

    def __init__(
        self, n_layers: int, n_kv_heads: int, head_dim: int, dtype: object = np.float64
    ) -> None:
        if min(n_layers, n_kv_heads, head_dim) < 1:
            raise ValueError("n_layers, n_kv_heads and head_dim must all be >= 1")
        self.n_layers, self.n_kv_heads, self.head_dim = n_layers, n_kv_heads, head_dim
        self.dtype = np.dtype(dtype)
        self._k: list[np.ndarray] = [self._empty(16) for _ in range(n_layers)]
        self._v: list[np.ndarray] = [self._empty(16) for _ in range(n_layers)]
        self._len = [0] * n_layers

    def _empty(self, capacity: int) -> np.ndarray:
        return np.empty((self.n_kv_heads, capacity, self.head_dim), dtype=self.dtype)

    def __len__(self) -> int:
        """Positions cached (in layer 0; all layers agree between forward passes)."""
        return self._len[0]

    def append(self, layer: int, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add ``(n_kv_heads, new, head_dim)`` keys and values; return all of this layer's."""
        expected = (self.n_kv_heads, self.head_dim)
        if k.shape != v.shape or (k.shape[0], k.shape[2]) != expected:
            raise ValueError(f"k and v must be (n_kv_heads={expected[0]}, new, {expected[1]})")
        n = self._len[layer]
        need = n + k.shape[1]
        if need > self._k[layer].shape[1]:
            capacity = max(need, 2 * self._k[layer].shape[1])
            for store in (self._k, self._v):
                grown = self._empty(capacity)
                grown[:, :n] = store[layer][:, :n]
                store[layer] = grown
        self._k[layer][:, n:need] = k
        self._v[layer][:, n:need] = v
        self._len[layer] = need
        return self._k[layer][:, :need], self._v[layer][:, :need]

    def truncate(self, n: int) -> None:
        """Keep only the first ``n`` positions of every layer: roll back rejected tokens.

        Speculative decoding appends a draft's tokens, then rejects a tail of them; engines
        drop those positions instead of recomputing the prefix: HF transformers crops its
        ``DynamicCache`` (``crop(max_length)``), llama.cpp removes them with
        ``llama_memory_seq_rm``, and vLLM V1 takes the rejected tokens off the request's computed
        count, so their slots are written over. It is O(1): the storage stays, and the next
        ``append`` writes over the dropped positions.

        Example:
            >>> cache = KVCache(n_layers=1, n_kv_heads=1, head_dim=2)
            >>> _ = cache.append(0, np.ones((1, 5, 2)), np.ones((1, 5, 2)))
            >>> cache.truncate(3)
            >>> len(cache), cache.shape
            (3, (2, 1, 1, 3, 2))
        """
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise ValueError(f"truncate needs a whole number of positions >= 0, got {n!r}")
        short = [(layer, m) for layer, m in enumerate(self._len) if m < n]
        if short:
            layer, m = short[0]
            raise ValueError(f"cannot truncate to {n} positions: layer {layer} holds only {m}")
        self._len = [int(n)] * self.n_layers

    @property
    def shape(self) -> tuple[int, int, int, int, int]:
        """``(2 for K and V, layers, kv_heads, positions, head_dim)``."""
        return (2, self.n_layers, self.n_kv_heads, len(self), self.head_dim)

    @property
    def nbytes(self) -> int:
        """Bytes the cached positions take (not the spare capacity)."""
        return int(np.prod(self.shape)) * self.dtype.itemsize
