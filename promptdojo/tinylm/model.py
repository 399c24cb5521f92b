"""A tiny decoder-only transformer that runs on numpy alone, in CPython and in Pyodide.

The architecture is Llama's in miniature: RMSNorm before each block, rotary position embeddings
(Hugging Face's rotate-half form), grouped-query attention, a SwiGLU feed-forward block, and an
output layer tied to the token embedding. ``scripts/train_tinylm.py`` trains it with PyTorch on
docstrings of Python's standard library and writes ``weights.safetensors`` beside this file.

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

from promptdojo import decoding
from promptdojo.kvcache import CostCounter, KVCache, attention
from promptdojo.tinylm import ops
from promptdojo.tinylm.quant import QUANT_SCHEMES, fake_quantize
from promptdojo.tinylm.safetensors import read_safetensors
from promptdojo.tinylm.tokenizer import CharTokenizer

__all__ = ["QUANT_SCHEMES", "Config", "TinyLM"]

HERE = Path(__file__).resolve().parent
WEIGHTS = HERE / "weights.safetensors"
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


_READ: dict[tuple[str, int, int], tuple[str, dict[str, np.ndarray]]] = {}


def _read_weights(path: Path) -> tuple[str, dict[str, np.ndarray]]:
    """The metadata and arrays of a weights file (``.safetensors``, its ``meta`` in the
    metadata; or an ``.npz`` with a ``meta`` array), read once per file version: every step of a
    lesson loads the model."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                _READ[key] = str(data["meta"]), {k: data[k] for k in data.files if k != "meta"}
        else:
            metadata, tensors = read_safetensors(path)
            if "meta" not in metadata:
                raise ValueError(f"{path}: its metadata has no 'meta' (the model's config)")
            _READ[key] = metadata["meta"], tensors
    return _READ[key]


def _matrix_names(config: Config) -> list[str]:
    names = ["embed"]
    for i in range(config.n_layers):
        names += [f"layers.{i}.{w}" for w in ("wq", "wk", "wv", "wo", "w1", "w3", "w2")]
    return names


class TinyLM:
    """The model: weights, a tokenizer, a forward pass with or without a KV cache.

    It was trained on windows of ``config.context`` = 128 characters. Rotary positions let it run
    past that, but positions from 128 on are ones it never saw in training.
    """

    #: What :meth:`generate` samples with when no sampler is given.
    DEFAULT_SAMPLER = decoding.Sampler(temperature=0.8, top_p=0.95)

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
        meta_text, arrays = _read_weights(Path(path) if path is not None else WEIGHTS)
        meta = json.loads(meta_text)
        # astype copies, so every model owns its weights and the cached arrays stay untouched.
        model = cls(Config(**meta["config"]), {k: a.astype(dtype) for k, a in arrays.items()})
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
        t, hd = ids.size, c.head_dim
        cos, sin = ops.rope_tables(np.arange(start, start + t), hd, c.rope_theta, w["embed"].dtype)
        x = w["embed"][ids]
        for i in range(c.n_layers):
            p = f"layers.{i}."
            h = ops.rms_norm(x, w[p + "attn_norm"], c.norm_eps)
            q = ops.matmul(h, w[p + "wq"]).reshape(t, c.n_heads, hd).transpose(1, 0, 2)
            k = ops.matmul(h, w[p + "wk"]).reshape(t, c.n_kv_heads, hd).transpose(1, 0, 2)
            v = ops.matmul(h, w[p + "wv"]).reshape(t, c.n_kv_heads, hd).transpose(1, 0, 2)
            q, k = ops.rope(q, cos, sin), ops.rope(k, cos, sin)
            if cache is not None:
                k, v = cache.append(i, k, v)
            result = attention(
                q, k, v, causal=True, counter=counter, return_weights=attention_weights is not None
            )
            if attention_weights is not None:
                result, weights = result
                attention_weights.append(weights)
            x = x + ops.matmul(result.transpose(1, 0, 2).reshape(t, c.d_model), w[p + "wo"])
            h = ops.rms_norm(x, w[p + "mlp_norm"], c.norm_eps)
            gated = ops.silu(ops.matmul(h, w[p + "w1"])) * ops.matmul(h, w[p + "w3"])
            x = x + ops.matmul(gated, w[p + "w2"])
        if counter is not None:
            counter.projection_macs += self.forward_cost(t, start).projection_macs
        x = ops.rms_norm(x, w["final_norm"], c.norm_eps)
        return ops.matmul(x, w["embed"].T)

    def forward_cost(self, new_tokens: int, cached: int = 0) -> CostCounter:
        """Multiply-adds of one :meth:`forward` of ``new_tokens`` after ``cached`` positions.

        This is what ``forward(..., counter=...)`` counts, from the shapes alone: per layer the
        projections cost ``d_model · (2·d_model + 2·kv_heads·head_dim + 3·d_ff)`` per token, and
        attention ``2 · n_heads · head_dim`` per pair of a new query and a key (masked pairs
        included, since the full score matrix is computed); the output layer adds
        ``d_model · vocab`` per token.

        Example:
            >>> model = TinyLM.load()
            >>> counter = CostCounter()
            >>> _ = model.forward(model.tokenizer.encode("def "), counter=counter)
            >>> model.forward_cost(4) == counter
            True
        """
        c, t = self.config, int(new_tokens)
        if t < 1 or cached < 0:
            raise ValueError("forward_cost needs new_tokens >= 1 and cached >= 0")
        per_token = c.d_model * (2 * c.d_model + 2 * c.n_kv_heads * c.head_dim + 3 * c.d_ff)
        return CostCounter(
            projection_macs=t * (c.n_layers * per_token + c.d_model * c.vocab_size),
            attention_macs=c.n_layers * 2 * c.n_heads * t * (int(cached) + t) * c.head_dim,
        )

    def generation_cost(
        self, prompt: str, max_new_tokens: int, use_cache: bool = True
    ) -> CostCounter:
        """The multiply-adds :meth:`generate` spends, step by step, from the shapes alone.

        Each step's work depends only on how many tokens it feeds the model and how many are
        cached, never on which tokens were picked, so this equals the ``counter`` a real
        ``generate(prompt, max_new_tokens, use_cache=use_cache, counter=...)`` fills, steps
        included, without running the model.

        Example:
            >>> model = TinyLM.load()
            >>> counter = CostCounter()
            >>> _ = model.generate("x", 5, use_cache=False, counter=counter)
            >>> model.generation_cost("x", 5, use_cache=False) == counter
            True
        """
        n = self.tokenizer.encode(prompt).size
        if n == 0:
            raise ValueError("prompt must hold at least one token")
        total = CostCounter()
        for step in range(int(max_new_tokens)):
            length = n + step  # tokens in the sequence when this step's logits are computed
            if not use_cache:
                cost = self.forward_cost(length)
            else:  # the first step fills the cache with the prompt, later ones add one token
                cost = self.forward_cost(n, 0) if step == 0 else self.forward_cost(1, length - 1)
            total.projection_macs += cost.projection_macs
            total.attention_macs += cost.attention_macs
            total.mark_step()
        return total

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

        Without a ``sampler`` it uses :attr:`DEFAULT_SAMPLER` (temperature 0.8, top-p 0.95:
        llama.cpp's defaults for those two, which it pairs with top-k 40 and min-p 0.05), not
        ``Sampler()`` (temperature 1.0, no truncation);
        ``seed=0`` makes every call with the same arguments give the same text.

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
            sampler=sampler or self.DEFAULT_SAMPLER,
            seed=seed,
        )
        return self.tokenizer.decode(new)

    def token_nll(
        self, text: str | None = None, window: int | None = None, n_windows: int | None = None
    ) -> np.ndarray:
        """Negative log-likelihood of every predicted character: the first half of :meth:`score`."""
        return self.score(text, window, n_windows)[0]

    def score(
        self, text: str | None = None, window: int | None = None, n_windows: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Negative log-likelihood (nats, float64) of every predicted character of ``text``, and
        the model's top-1 guess (the argmax) at each of those positions.

        The text (default: held-out) is cut into windows of ``window + 1`` characters (default:
        the training context); in each, every character after the first is predicted from those
        before it, all in one forward pass. With ``n_windows``, only that many windows are
        scored, spread evenly over the text: every ``k``-th window from the first, with
        ``k = windows // n_windows`` (every window when there are no more than ``n_windows``).

        Example:
            >>> text = "Return the number of items."
            >>> nll, top1 = TinyLM.load().score(text, window=8, n_windows=2)
            >>> nll.shape, top1.shape  # 26 predictions in 4 windows; every second one is scored
            ((16,), (16,))
        """
        text = HELDOUT.read_text(encoding="utf-8") if text is None else text
        window = window or self.config.context
        ids = self.tokenizer.encode(text)
        if ids.size < 2:
            raise ValueError("perplexity needs a text of at least two characters")
        starts = range(0, ids.size - 1, window)
        if n_windows is not None:
            if int(n_windows) != n_windows or n_windows < 1:
                raise ValueError(f"n_windows must be a whole number >= 1, got {n_windows!r}")
            starts = starts[:: max(1, len(starts) // int(n_windows))][: int(n_windows)]
        nll, top1 = [], []
        for start in starts:
            chunk = ids[start : start + window + 1]
            logits = self.forward(chunk[:-1]).astype(np.float64)
            logits -= logits.max(axis=-1, keepdims=True)
            log_norm = np.log(np.exp(logits).sum(axis=-1))
            nll.append(log_norm - logits[np.arange(chunk.size - 1), chunk[1:]])
            top1.append(logits.argmax(axis=-1))
        return np.concatenate(nll), np.concatenate(top1)

    def perplexity(
        self, text: str | None = None, window: int | None = None, n_windows: int | None = None
    ) -> float:
        """``exp(mean negative log-likelihood)`` per character over ``text`` (default: held-out).

        Windows as in :meth:`token_nll`: ``n_windows`` scores only that many, spread evenly over
        the text, for a cheaper estimate.

        Example:
            >>> 1 < TinyLM.load().perplexity("Return the number of items.") < 96
            True
        """
        return math.exp(float(np.mean(self.token_nll(text, window, n_windows))))

    def quantized(self, scheme: str) -> TinyLM:
        """A copy whose matrices went through ``scheme`` and back (see :data:`QUANT_SCHEMES`).

        Norm weights stay in full precision, as llama.cpp keeps them.

        Example:
            >>> model = TinyLM.load()
            >>> text = "Return the number of items in the list."
            >>> q8, q4 = model.quantized("Q8_0"), model.quantized("int4-tensor")
            >>> q8.perplexity(text) < q4.perplexity(text)
            True
        """
        if scheme not in QUANT_SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(QUANT_SCHEMES)}")
        weights = dict(self.weights)
        for name in _matrix_names(self.config):
            w = self.weights[name]
            # Projections are stored (in, out) for ``x @ w``; the embedding is (vocab, d_model).
            weights[name] = (
                fake_quantize(w, scheme) if name == "embed" else fake_quantize(w.T, scheme).T
            )
        model = TinyLM(self.config, weights, self.tokenizer)
        model.meta = getattr(self, "meta", {})
        return model
