"""Decoding loops: repeated draws, token-by-token generation and beam search."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from promptdojo.decoding.sampling import Sampler, _logits, _rng, log_softmax, sample


def draw_counts(
    logits: object,
    n: int,
    temperature: float = 1.0,
    seed: int | np.random.Generator | None = 0,
    vocab: Sequence[str] | None = None,
) -> dict[str, int] | dict[int, int]:
    """How often each token comes up in ``n`` seeded draws (every token listed, zeros included).

    Example:
        >>> draw_counts(np.log([0.6, 0.3, 0.1]), 20, temperature=0.2, vocab=["the", "a", "one"])
        {'the': 20, 'a': 0, 'one': 0}
    """
    if int(n) != n or n < 0:
        raise ValueError(f"n must be a whole number >= 0, got {n!r}")
    x = _logits(logits)
    if vocab is not None and len(vocab) != x.size:
        raise ValueError(f"vocab has {len(vocab)} words but logits has {x.size} entries")
    draws = sample(x, temperature, rng=_rng(seed), size=int(n))
    counts = np.bincount(np.asarray(draws, dtype=np.int64), minlength=x.size)
    keys: Sequence[str] | range = vocab if vocab is not None else range(x.size)
    return {key: int(count) for key, count in zip(keys, counts, strict=True)}


def generate(
    next_logits: Callable[[Sequence[int]], np.ndarray],
    prompt: Sequence[int],
    max_new_tokens: int,
    sampler: Sampler | None = None,
    seed: int | np.random.Generator | None = 0,
    eos_token: int | None = None,
) -> list[int]:
    """Generate up to ``max_new_tokens`` tokens after ``prompt`` with any model.

    ``next_logits(tokens)`` returns the logits for the token after ``tokens``; a model with a KV
    cache can remember what it has seen and only process the new tail. Generation stops after
    ``eos_token``. Returns only the new tokens.

    Example:
        >>> bigram = lambda toks: np.log(np.roll([0.8, 0.1, 0.1], toks[-1] + 1))
        >>> generate(bigram, [0], 4, Sampler(temperature=0))
        [1, 2, 0, 1]
    """
    if int(max_new_tokens) != max_new_tokens or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be a whole number >= 0, got {max_new_tokens!r}")
    if not len(prompt):
        raise ValueError("prompt must hold at least one token")
    sampler = sampler or Sampler()
    rng = _rng(seed)
    tokens = [int(t) for t in prompt]
    new: list[int] = []
    for _ in range(int(max_new_tokens)):
        token = sampler.pick(next_logits(tokens), rng, seen=tokens)
        tokens.append(token)
        new.append(token)
        if eos_token is not None and token == eos_token:
            break
    return new


@dataclass(frozen=True)
class BeamResult:
    """A finished beam: its new tokens, summed log-probability and length-penalized score."""

    tokens: tuple[int, ...]
    logprob: float
    score: float


def beam_search(
    next_logits: Callable[[Sequence[int]], np.ndarray],
    prompt: Sequence[int],
    max_new_tokens: int,
    num_beams: int = 4,
    length_penalty: float = 1.0,
    eos_token: int | None = None,
) -> list[BeamResult]:
    """Beam search with Hugging Face's length penalty, best first.

    A hypothesis scores ``sum_logprobs / (generated_length ** length_penalty)`` as in HF's
    ``BeamHypotheses.add``: ``length_penalty > 0`` favours longer outputs, ``< 0`` shorter ones.
    Beams that emit ``eos_token`` are finished; the rest finish at ``max_new_tokens``.

    Example:
        >>> bigram = lambda toks: np.log(np.roll([0.6, 0.3, 0.1], toks[-1] + 1))
        >>> beam_search(bigram, [0], 2, num_beams=2)[0].tokens
        (1, 2)
    """
    if int(num_beams) != num_beams or num_beams < 1:
        raise ValueError(f"num_beams must be a whole number >= 1, got {num_beams!r}")
    if int(max_new_tokens) != max_new_tokens or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")
    if not len(prompt):
        raise ValueError("prompt must hold at least one token")
    start = tuple(int(t) for t in prompt)
    beams: list[tuple[tuple[int, ...], float]] = [((), 0.0)]
    finished: list[BeamResult] = []

    def finish(tokens: tuple[int, ...], logprob: float) -> None:
        score = logprob / (len(tokens) ** length_penalty)
        finished.append(BeamResult(tokens, logprob, score))

    for _ in range(int(max_new_tokens)):
        candidates: list[tuple[float, tuple[int, ...]]] = []
        for tokens, logprob in beams:
            scores = log_softmax(next_logits(start + tokens))
            top = np.argsort(-scores, kind="stable")[: 2 * num_beams]
            candidates += [(logprob + float(scores[t]), (*tokens, int(t))) for t in top]
        candidates.sort(key=lambda c: -c[0])
        beams = []
        for logprob, tokens in candidates:
            if eos_token is not None and tokens[-1] == eos_token:
                finish(tokens, logprob)
            else:
                beams.append((tokens, logprob))
            if len(beams) == num_beams:
                break
        if not beams:
            break
    for tokens, logprob in beams:
        finish(tokens, logprob)
    finished.sort(key=lambda r: -r.score)
    return finished[:num_beams]
