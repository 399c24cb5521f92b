"""A tiny decoder-only transformer that runs on numpy alone, in CPython and in Pyodide.

The architecture is Llama's in miniature: RMSNorm before each block, rotary position embeddings
(Hugging Face's rotate-half form), grouped-query attention, a SwiGLU feed-forward block, and an
output layer tied to the token embedding. ``scripts/train_tinylm.py`` trains it with PyTorch on
docstrings of Python's standard library and writes ``weights.npz`` beside this file.

Example:
    >>> model = TinyLM.load()
    >>> model.config.n_heads, model.config.n_kv_heads
    (4, 2)
    >>> text = model.generate("def ", max_new_tokens=12, seed=0)
    >>> len(text)
    12
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from promptdojo import decoding, quantization
from promptdojo.kvcache import CostCounter, KVCache, attention
from promptdojo.tinylm.tokenizer import CharTokenizer

__all__ = ["QUANT_SCHEMES", "Config", "TinyLM"]

HERE = Path(__file__).resolve().parent
WEIGHTS = HERE / "weights.npz"
HELDOUT = HERE / "heldout.txt"


@dataclass(frozen=True)
class Config:
    """Shape of the model."""

    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    context: int
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        """Width of one attention head."""
        return self.d_model // self.n_heads


def _rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def _rope(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    """Rotate ``(heads, T, head_dim)`` by position, Hugging Face Llama's ``rotate_half`` layout."""
    half = x.shape[-1] // 2
    inv_freq = 1.0 / theta ** (np.arange(0, half, dtype=np.float64) * 2 / x.shape[-1])
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos = np.cos(np.concatenate([angles, angles], axis=-1)).astype(x.dtype)
    sin = np.sin(np.concatenate([angles, angles], axis=-1)).astype(x.dtype)
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def _matrix_names(config: Config) -> list[str]:
    names = ["embed"]
    for i in range(config.n_layers):
        names += [f"layers.{i}.{w}" for w in ("wq", "wk", "wv", "wo", "w1", "w3", "w2")]
    return names


def _fake_quantize(rows: np.ndarray, scheme: str) -> np.ndarray:
    """Quantize then dequantize ``rows``: one row per output channel (or per embedded token), so
    per-channel scales, groups and llama.cpp blocks all run along a row, as in llama.cpp."""
    if scheme == "Q8_0":
        return quantization.quantize_q8_0(rows).dequantize().astype(rows.dtype)
    if scheme == "Q4_0":
        return quantization.quantize_q4_0(rows).dequantize().astype(rows.dtype)
    bits, _, granularity = scheme.removeprefix("int").partition("-")
    kwargs: dict[str, int] = {}
    if granularity == "channel":
        kwargs["axis"] = 0
    elif granularity.startswith("g"):
        kwargs["group_size"] = int(granularity[1:])
    q = quantization.quantize_symmetric(rows, bits=int(bits), **kwargs)
    return q.dequantize().astype(rows.dtype)


#: Weight-quantization schemes :meth:`TinyLM.quantized` understands.
QUANT_SCHEMES: tuple[str, ...] = (
    "int8",
    "int8-channel",
    "Q8_0",
    "int4-g32",
    "Q4_0",
    "int4-channel",
    "int4",
)


class TinyLM:
    """The model: weights, a tokenizer, a forward pass with or without a KV cache."""

    def __init__(
        self, config: Config, weights: dict[str, np.ndarray], tokenizer: CharTokenizer | None = None
    ) -> None:
        self.config = config
        self.weights = weights
        self.tokenizer = tokenizer or CharTokenizer()
        if len(self.tokenizer) != config.vocab_size:
            raise ValueError(
                f"tokenizer has {len(self.tokenizer)} tokens, model expects {config.vocab_size}"
            )

    @classmethod
    def load(cls, path: str | Path | None = None, dtype: object = np.float32) -> TinyLM:
        """Load weights (default: the ones shipped with promptdojo) in ``dtype``.

        Example:
            >>> TinyLM.load(dtype=np.float64).weights["embed"].dtype
            dtype('float64')
        """
        data = np.load(Path(path) if path is not None else WEIGHTS, allow_pickle=False)
        meta = json.loads(str(data["meta"]))
        config = Config(**meta["config"])
        weights = {k: data[k].astype(dtype) for k in data.files if k != "meta"}
        model = cls(config, weights)
        model.meta = meta
        return model

    @property
    def n_params(self) -> int:
        """Number of weights."""
        return sum(int(w.size) for w in self.weights.values())

    def new_cache(self) -> KVCache:
        """An empty KV cache shaped for this model."""
        c = self.config
        dtype = self.weights["embed"].dtype
        return KVCache(c.n_layers, c.n_kv_heads, c.head_dim, dtype=dtype)

    def forward(
        self,
        tokens: np.ndarray | list[int],
        cache: KVCache | None = None,
        counter: CostCounter | None = None,
        attention_weights: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """Logits ``(len(tokens), vocab)`` for the next token after each position.

        With a ``cache``, ``tokens`` continue the cached sequence: only they are computed, and
        their keys and values are appended. ``counter`` counts multiply-adds; when
        ``attention_weights`` is a list, each layer's weights are appended to it.

        Example:
            >>> model = TinyLM.load()
            >>> model.forward(model.tokenizer.encode("def ")).shape
            (4, 96)
        """
        c, w = self.config, self.weights
        ids = np.asarray(tokens, dtype=np.int64)
        if ids.ndim != 1 or ids.size == 0:
            raise ValueError(f"tokens must be a non-empty 1-D sequence, got shape {ids.shape}")
        if ids.min() < 0 or ids.max() >= c.vocab_size:
            raise ValueError(f"token ids must be within [0, {c.vocab_size})")
        start = len(cache) if cache is not None else 0
        positions = np.arange(start, start + ids.size)
        t, hd = ids.size, c.head_dim
        x = w["embed"][ids]
        for i in range(c.n_layers):
            p = f"layers.{i}."
            h = _rms_norm(x, w[p + "attn_norm"], c.norm_eps)
            q = (h @ w[p + "wq"]).reshape(t, c.n_heads, hd).transpose(1, 0, 2)
            k = (h @ w[p + "wk"]).reshape(t, c.n_kv_heads, hd).transpose(1, 0, 2)
            v = (h @ w[p + "wv"]).reshape(t, c.n_kv_heads, hd).transpose(1, 0, 2)
            q, k = _rope(q, positions, c.rope_theta), _rope(k, positions, c.rope_theta)
            if cache is not None:
                k, v = cache.append(i, k, v)
            result = attention(
                q, k, v, causal=True, counter=counter, return_weights=attention_weights is not None
            )
            if attention_weights is not None:
                result, weights = result
                attention_weights.append(weights)
            x = x + result.transpose(1, 0, 2).reshape(t, c.d_model) @ w[p + "wo"]
            h = _rms_norm(x, w[p + "mlp_norm"], c.norm_eps)
            x = x + (_silu(h @ w[p + "w1"]) * (h @ w[p + "w3"])) @ w[p + "w2"]
            if counter is not None:
                kv = c.n_kv_heads * hd
                counter.projection_macs += t * c.d_model * (2 * c.d_model + 2 * kv + 3 * c.d_ff)
        x = _rms_norm(x, w["final_norm"], c.norm_eps)
        if counter is not None:
            counter.projection_macs += t * c.d_model * c.vocab_size
        return x @ w["embed"].T

    def next_logits_fn(
        self, use_cache: bool = True, counter: CostCounter | None = None
    ) -> Callable[[list[int]], np.ndarray]:
        """A ``tokens -> next-token logits`` function for :func:`promptdojo.decoding.generate`.

        With ``use_cache`` it feeds the model only the tokens it has not seen yet; without, it
        recomputes the whole sequence every call.
        """
        cache = self.new_cache() if use_cache else None

        def next_logits(tokens: list[int]) -> np.ndarray:
            fresh = tokens[len(cache) :] if cache is not None else tokens
            logits = self.forward(fresh, cache=cache, counter=counter)[-1]
            if counter is not None:
                counter.mark_step()
            return logits

        return next_logits

    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 64,
        sampler: decoding.Sampler | None = None,
        seed: int | np.random.Generator | None = 0,
        use_cache: bool = True,
        counter: CostCounter | None = None,
    ) -> str:
        """Continue ``prompt`` with any decoding strategy, with the KV cache on or off.

        Example:
            >>> model = TinyLM.load()
            >>> greedy = decoding.Sampler(temperature=0)
            >>> a = model.generate("def ", 20, greedy, use_cache=True)
            >>> a == model.generate("def ", 20, greedy, use_cache=False)
            True
        """
        tokens = self.tokenizer.encode(prompt).tolist()
        new = decoding.generate(
            self.next_logits_fn(use_cache, counter),
            tokens,
            max_new_tokens,
            sampler=sampler or decoding.Sampler(temperature=0.8, top_p=0.95),
            seed=seed,
        )
        return self.tokenizer.decode(new)

    def perplexity(self, text: str | None = None, window: int | None = None) -> float:
        """``exp(mean negative log-likelihood)`` per character over ``text`` (default: held-out).

        The text is cut into windows of ``window + 1`` characters (default: the training context);
        in each, every character after the first is predicted from those before it.

        Example:
            >>> 1 < TinyLM.load().perplexity("Return the number of items.") < 96
            True
        """
        text = HELDOUT.read_text(encoding="utf-8") if text is None else text
        window = window or self.config.context
        ids = self.tokenizer.encode(text)
        if ids.size < 2:
            raise ValueError("perplexity needs a text of at least two characters")
        total, count = 0.0, 0
        for start in range(0, ids.size - 1, window):
            chunk = ids[start : start + window + 1]
            if chunk.size < 2:
                break
            logits = self.forward(chunk[:-1]).astype(np.float64)
            logits -= logits.max(axis=-1, keepdims=True)
            log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
            total -= float(log_probs[np.arange(chunk.size - 1), chunk[1:]].sum())
            count += chunk.size - 1
        return math.exp(total / count)

    def quantized(self, scheme: str) -> TinyLM:
        """A copy whose matrices went through ``scheme`` and back (see :data:`QUANT_SCHEMES`).

        Norm weights stay in full precision, as llama.cpp keeps them.

        Example:
            >>> model = TinyLM.load()
            >>> text = "Return the number of items in the list."
            >>> model.quantized("int8").perplexity(text) < model.quantized("int4").perplexity(text)
            True
        """
        if scheme not in QUANT_SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(QUANT_SCHEMES)}")
        weights = dict(self.weights)
        for name in _matrix_names(self.config):
            w = self.weights[name]
            # Projections are stored (in, out) for ``x @ w``; the embedding is (vocab, d_model).
            weights[name] = (
                _fake_quantize(w, scheme) if name == "embed" else _fake_quantize(w.T, scheme).T
            )
        model = TinyLM(self.config, weights, self.tokenizer)
        model.meta = getattr(self, "meta", {})
        return model
