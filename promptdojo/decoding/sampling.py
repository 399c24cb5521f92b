"""The sampling rules: softmax, the warpers, the repetition penalty, :class:`Sampler`, one draw.

See :mod:`promptdojo.decoding` for the engines whose semantics each function follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Hugging Face's order of the sampling warpers.
HF_ORDER: tuple[str, ...] = ("temperature", "top_k", "top_p", "min_p")

#: llama.cpp's default chain, restricted to these four warpers: temperature comes last. Its full
#: default (``common_params_sampling::samplers`` in ``common/common.h``) is penalties, DRY,
#: top-n-sigma, top-k, typical-p, top-p, min-p, XTC, temperature, then the draw.
LLAMA_CPP_ORDER: tuple[str, ...] = ("top_k", "top_p", "min_p", "temperature")

_NEG_INF = -np.inf


def _logits(logits: object, *, name: str = "logits") -> np.ndarray:
    """Validate a 1-D vector of logits; ``-inf`` marks a token already filtered out."""
    array = np.asarray(logits, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D vector over the vocabulary, got shape {array.shape}"
        )
    if array.size == 0:
        raise ValueError(f"{name} is empty: the vocabulary must have at least one token")
    if np.isnan(array).any():
        raise ValueError(f"{name} contains NaN at index {int(np.flatnonzero(np.isnan(array))[0])}")
    if np.isposinf(array).any():
        raise ValueError(
            f"{name} contains +inf at index {int(np.flatnonzero(np.isposinf(array))[0])}"
        )
    if np.isneginf(array).all():
        raise ValueError(f"every entry of {name} is -inf: no token is left to choose")
    return array


def _temperature(temperature: float) -> float:
    t = float(temperature)
    if not np.isfinite(t) or t < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    return t


def log_softmax(logits: object) -> np.ndarray:
    """Log-probabilities of ``logits`` (numerically stable; ``-inf`` stays ``-inf``).

    Example:
        >>> np.round(np.exp(log_softmax([0.0, 0.0])), 2)
        array([0.5, 0.5])
    """
    x = _logits(logits)
    shifted = x - x.max()
    return shifted - np.log(np.exp(shifted).sum())


def softmax(logits: object, temperature: float = 1.0) -> np.ndarray:
    """Probabilities of ``logits / temperature``; temperature 0 is the greedy one-hot (vLLM).

    Example:
        >>> softmax([2.0, 1.0, 0.0], temperature=0)
        array([1., 0., 0.])
    """
    x = _logits(logits)
    t = _temperature(temperature)
    if t == 0:
        one_hot = np.zeros_like(x)
        one_hot[int(np.argmax(x))] = 1.0
        return one_hot
    scaled = x / t
    scaled -= scaled.max()
    weights = np.exp(scaled)
    return weights / weights.sum()


def greedy(logits: object) -> int:
    """The most likely token; on ties the first maximum wins (``argmax`` semantics).

    Example:
        >>> greedy([1.0, 3.0, 3.0])
        1
    """
    return int(np.argmax(_logits(logits)))


def apply_temperature(logits: object, temperature: float) -> np.ndarray:
    """``logits / temperature`` (Hugging Face ``TemperatureLogitsWarper``); 0 keeps only the argmax.

    Example:
        >>> apply_temperature([2.0, 1.0], 0.5)
        array([4., 2.])
    """
    x = _logits(logits)
    t = _temperature(temperature)
    if t == 0:
        out = np.full_like(x, _NEG_INF)
        best = int(np.argmax(x))
        out[best] = x[best]
        return out
    return x / t


def top_k_filter(logits: object, k: int, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Keep the ``k`` highest logits and every token tied with the k-th (``TopKLogitsWarper``).

    ``k`` at or above the vocabulary size changes nothing.

    Example:
        >>> top_k_filter([1.0, 3.0, 2.0, 2.0], k=2)
        array([-inf,   3.,   2.,   2.])
    """
    x = _logits(logits)
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"top-k needs an integer k >= 1, got {k!r}")
    k = min(max(int(k), int(min_tokens_to_keep)), x.size)
    kth = np.partition(x, x.size - k)[x.size - k]
    return np.where(x < kth, _NEG_INF, x)


def _check_p(p: float, name: str) -> float:
    value = float(p)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be within [0, 1], got {p!r}")
    return value


def top_p_filter(logits: object, p: float, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Nucleus filtering as Hugging Face's ``TopPLogitsWarper`` does it.

    Keeps the smallest most-probable-first set of tokens whose probability mass is at least ``p``,
    including the token that crosses ``p``, and never fewer than ``min_tokens_to_keep``. In HF
    terms: sort ascending, remove tokens whose cumulative probability is ``<= 1 - p``. ``p = 1``
    changes nothing.

    Example:
        >>> top_p_filter(np.log([0.5, 0.3, 0.2]), p=0.6)
        array([-0.69314718, -1.2039728 ,        -inf])
    """
    x = _logits(logits)
    p = _check_p(p, "top_p")
    if min_tokens_to_keep < 1:
        raise ValueError(f"min_tokens_to_keep must be >= 1, got {min_tokens_to_keep!r}")
    order = np.argsort(x, kind="stable")  # ascending, as HF sorts
    probs = softmax(x[order])
    cumulative = np.cumsum(probs)
    remove_sorted = cumulative <= (1.0 - p)
    remove_sorted[max(0, x.size - int(min_tokens_to_keep)) :] = False
    remove = np.empty_like(remove_sorted)
    remove[order] = remove_sorted
    return np.where(remove, _NEG_INF, x)


def min_p_filter(logits: object, min_p: float, min_tokens_to_keep: int = 1) -> np.ndarray:
    """Keep tokens with ``p_i >= min_p * p_max`` (Hugging Face ``MinPLogitsWarper``).

    Example:
        >>> min_p_filter(np.log([0.6, 0.3, 0.1]), min_p=0.25)
        array([-0.51082562, -1.2039728 ,        -inf])
    """
    x = _logits(logits)
    min_p = _check_p(min_p, "min_p")
    probs = softmax(x)
    remove = probs < min_p * probs.max()
    keep_first = np.argsort(-x, kind="stable")[: int(min_tokens_to_keep)]
    remove[keep_first] = False
    return np.where(remove, _NEG_INF, x)


def repetition_penalty(logits: object, seen: Sequence[int], penalty: float) -> np.ndarray:
    """Penalize every token in ``seen`` once (``RepetitionPenaltyLogitsProcessor``).

    Positive logits are divided by ``penalty``, negative ones multiplied, so a penalty above 1
    always makes a seen token less likely. Repeats in ``seen`` do not stack.

    Example:
        >>> repetition_penalty([2.0, -1.0, 0.5], seen=[0, 1, 0], penalty=2.0)
        array([ 1. , -2. ,  0.5])
    """
    x = _logits(logits).copy()
    if not float(penalty) > 0:
        raise ValueError(f"repetition penalty must be > 0, got {penalty!r}")
    ids = np.unique(np.asarray(list(seen), dtype=np.int64))
    if ids.size and (ids.min() < 0 or ids.max() >= x.size):
        raise ValueError(f"seen token ids must be within [0, {x.size}), got {ids.tolist()}")
    picked = x[ids]
    x[ids] = np.where(picked < 0, picked * penalty, picked / penalty)
    return x


_penalize = repetition_penalty  # process_logits has a parameter of the same name


@dataclass(frozen=True)
class Sampler:
    """A decoding strategy: the knobs of an engine's sampling parameters.

    The defaults change nothing: ``Sampler()`` samples the model's distribution as it is
    (temperature 1.0, no truncation), as a bare vLLM ``SamplingParams()`` does (top-k off). Both
    engines read the model's ``generation_config.json`` first, though. vLLM does by default
    (``generation_config="auto"``): its server fills every field a request leaves unset from that
    file, and so does ``LLM.get_default_sampling_params()``, which ``LLM.generate`` uses when given
    no parameters. Hugging Face's ``GenerationConfig`` starts from that file too, and where it is
    silent decodes greedily unless ``do_sample=True``, and then keeps ``top_k=50``.
    :meth:`promptdojo.tinylm.TinyLM.generate` picks other defaults again; say which you use.

    ``order`` says in which order the warpers run; Hugging Face's is :data:`HF_ORDER`, llama.cpp's
    :data:`LLAMA_CPP_ORDER`. ``None`` or a neutral value (top_k=None, top_p=1.0, min_p=0.0) switches
    a warper off; a warper that is switched on must appear in ``order``, or :class:`ValueError`
    says which one is missing.

    Example:
        >>> Sampler(temperature=0).pick(np.log([0.2, 0.5, 0.3]), np.random.default_rng(0))
        1
    """

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float = 1.0
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    order: tuple[str, ...] = HF_ORDER

    def __post_init__(self) -> None:
        _temperature(self.temperature)
        if self.top_k is not None and (int(self.top_k) != self.top_k or self.top_k < 1):
            raise ValueError(f"top_k must be None or an integer >= 1, got {self.top_k!r}")
        _check_p(self.top_p, "top_p")
        _check_p(self.min_p, "min_p")
        if not self.repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0, got {self.repetition_penalty!r}")
        _check_order(self.order, _active(self.temperature, self.top_k, self.top_p, self.min_p))

    def process(self, logits: object, seen: Sequence[int] = ()) -> np.ndarray:
        """The logits after the repetition penalty and the warpers, in ``order``."""
        return process_logits(
            logits,
            temperature=self.temperature,
            top_k=self.top_k,
            top_p=self.top_p,
            min_p=self.min_p,
            repetition_penalty=self.repetition_penalty,
            seen=seen,
            order=self.order,
        )

    def pick(self, logits: object, rng: np.random.Generator, seen: Sequence[int] = ()) -> int:
        """Choose one token: greedy at temperature 0, else a seeded draw."""
        processed = self.process(logits, seen)
        return greedy(processed) if self.temperature == 0 else int(sample(processed, rng=rng))


def _active(temperature: float, top_k: int | None, top_p: float, min_p: float) -> list[str]:
    """The warpers these settings switch on, in :data:`HF_ORDER`."""
    on = {
        "temperature": temperature != 1,
        "top_k": top_k is not None,
        "top_p": top_p < 1,
        "min_p": min_p > 0,
    }
    return [name for name in HF_ORDER if on[name]]


def _check_order(order: Sequence[str], active: Sequence[str]) -> None:
    """Fail loudly on an unknown or repeated step, or on a warper switched on but not in ``order``
    (it would be skipped without a word: ``top_k=1`` with ``order=("temperature",)`` keeps all)."""
    unknown = [name for name in order if name not in HF_ORDER]
    if unknown or len(set(order)) != len(order):
        raise ValueError(
            f"order must list distinct steps from {HF_ORDER}, got {tuple(order)!r}"
            + (f"; unknown: {', '.join(map(repr, unknown))}" if unknown else "")
        )
    missing = [name for name in active if name not in order]
    if missing:
        raise ValueError(
            f"{', '.join(missing)} is set but missing from order={tuple(order)!r}, so it would "
            f"never run; add it where it belongs, e.g. order={HF_ORDER!r}"
        )


def process_logits(
    logits: object,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float = 1.0,
    min_p: float = 0.0,
    repetition_penalty: float = 1.0,
    seen: Sequence[int] = (),
    order: Sequence[str] = HF_ORDER,
) -> np.ndarray:
    """Apply the repetition penalty, then temperature/top-k/top-p/min-p in ``order``.

    The order matters: top-p after temperature sees the reshaped distribution, top-p before it sees
    the raw one, so they can keep different sets. Every warper that is switched on must be named
    in ``order``; leaving one out raises :class:`ValueError` instead of skipping it.

    Example:
        >>> x = np.log([0.5, 0.25, 0.15, 0.1])
        >>> kept = lambda y: int(np.isfinite(y).sum())
        >>> kept(process_logits(x, temperature=3.0, top_p=0.7))
        3
        >>> kept(process_logits(x, temperature=3.0, top_p=0.7, order=("top_p", "temperature")))
        2
    """
    x = _logits(logits)
    _check_order(order, _active(temperature, top_k, top_p, min_p))
    if repetition_penalty != 1.0 and len(seen):
        x = _penalize(x, seen, repetition_penalty)
    steps: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "temperature": lambda y: apply_temperature(y, temperature) if temperature != 1 else y,
        "top_k": lambda y: top_k_filter(y, top_k) if top_k is not None else y,
        "top_p": lambda y: top_p_filter(y, top_p) if top_p < 1 else y,
        "min_p": lambda y: min_p_filter(y, min_p) if min_p > 0 else y,
    }
    for name in order:
        x = steps[name](x)
    return x


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def sample(
    logits: object,
    temperature: float = 1.0,
    rng: np.random.Generator | int | None = None,
    size: int | None = None,
) -> int | np.ndarray:
    """Draw token(s) from ``softmax(logits / temperature)`` with a seeded generator.

    Temperature 0 is greedy. The draw is inverse-CDF on ``rng.random()``, so a given seed gives the
    same tokens on every platform numpy runs on, Pyodide included.

    Example:
        >>> sample(np.log([0.7, 0.2, 0.1]), temperature=0.2, rng=0)
        0
    """
    probs = softmax(logits, temperature)
    generator = _rng(rng)
    cdf = np.cumsum(probs)
    u = generator.random(size) * cdf[-1]
    picked = np.minimum(np.searchsorted(cdf, u, side="right"), probs.size - 1)
    return int(picked) if size is None else picked.astype(np.int64)
