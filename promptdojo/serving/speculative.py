"""Speculative decoding: the expected gain, the rejection-sampling test, and the rollback.

A drafter proposes ``γ`` tokens; the target model scores all of them in one forward pass and
keeps a prefix of them, plus one token of its own. Leviathan, Kalman and Matias, "Fast Inference
from Transformers via Speculative Decoding" (ICML 2023, arXiv:2211.17192), show that accepting a
draft token ``x`` with probability ``min(1, p(x) / q(x))`` (``p`` the target's distribution,
``q`` the drafter's) and, at the first rejection, drawing from ``max(0, p − q)`` normalized
leaves every output token distributed exactly as the target's own samples. vLLM V1 does this in
``vllm/v1/sample/rejection_sampler.py``: the "recovered" token at a rejection, the "bonus" token
when every draft is accepted. The target's cache then holds entries for rejected drafts; vLLM
takes them off the request's computed tokens (``update_from_output`` in
``vllm/v1/core/sched/scheduler.py``), here :meth:`promptdojo.kvcache.KVCache.truncate` cuts them.
"""

from __future__ import annotations

import numpy as np


def expected_tokens_per_pass(alpha: float, gamma: int) -> float:
    """Tokens one verification pass yields on average: ``(1 − α^(γ+1)) / (1 − α)``.

    ``alpha`` is the chance that a draft token is accepted (taken as independent of position,
    as in Leviathan et al.); ``gamma`` the draft length. The pass always yields at least
    the target's own token, and at most ``γ + 1``.

    Example:
        >>> round(expected_tokens_per_pass(0.8, 4), 3), expected_tokens_per_pass(1.0, 4)
        (3.362, 5.0)
    """
    if not 0 <= alpha <= 1 or gamma < 0:
        raise ValueError(f"need 0 <= alpha <= 1 and gamma >= 0, got alpha={alpha}, gamma={gamma}")
    if alpha == 1:
        return float(gamma + 1)
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def acceptance_rate(p: np.ndarray, q: np.ndarray) -> float:
    """The chance a draft from ``q`` is accepted by a target ``p``: ``Σ min(p, q)``.

    Example:
        >>> acceptance_rate(np.array([0.5, 0.5]), np.array([0.9, 0.1]))
        0.6
    """
    return float(np.minimum(np.asarray(p, float), np.asarray(q, float)).sum().round(12))


def residual(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The distribution to draw from after a rejection: ``max(0, p − q)``, normalized.

    Example:
        >>> residual(np.array([0.5, 0.5]), np.array([0.9, 0.1])).tolist()
        [0.0, 1.0]
    """
    r = np.maximum(np.asarray(p, float) - np.asarray(q, float), 0.0)
    total = r.sum()
    return r / total if total > 0 else np.asarray(p, float)


def rejection_sample(
    target_probs: np.ndarray,
    draft_probs: np.ndarray,
    draft_token_ids: np.ndarray,
    rng: np.random.Generator,
) -> list[int]:
    """The tokens one verification pass emits, as vLLM's rejection sampler does.

    ``target_probs`` is ``(γ + 1, vocab)``: the target's distribution at each draft position
    and one after the last; ``draft_probs`` is ``(γ, vocab)``. Returns the accepted drafts, then
    the recovered token (at the first rejection) or the bonus token (when all are accepted).

    Example:
        >>> p = np.array([[0.0, 1.0], [1.0, 0.0]]); q = np.array([[0.0, 1.0]])
        >>> rejection_sample(p, q, np.array([1]), np.random.default_rng(0))
        [1, 0]
    """
    out: list[int] = []
    for i, x in enumerate(np.asarray(draft_token_ids).tolist()):
        p, q = target_probs[i], draft_probs[i]
        if rng.random() * q[x] < p[x]:  # u < p(x) / q(x), without dividing by zero
            out.append(int(x))
            continue
        out.append(int(rng.choice(p.size, p=residual(p, q))))
        return out
    last = target_probs[len(out)]
    out.append(int(rng.choice(last.size, p=last)))
    return out


def speculative_draws(p: np.ndarray, q: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` independent one-token speculative steps at once: draft from ``q``, accept or draw
    from the residual. Their histogram approaches ``p``, whatever ``q`` is.

    Example:
        >>> p, q = np.array([0.7, 0.2, 0.1]), np.array([0.1, 0.1, 0.8])
        >>> x = speculative_draws(p, q, 200_000, np.random.default_rng(0))
        >>> bool(np.abs(np.bincount(x, minlength=3) / x.size - p).max() < 0.01)
        True
    """
    p, q = np.asarray(p, float), np.asarray(q, float)
    drafts = rng.choice(q.size, size=n, p=q)
    u = rng.random(n)
    accept = u * q[drafts] < p[drafts]
    out = drafts.copy()
    rejected = ~accept
    out[rejected] = rng.choice(p.size, size=int(rejected.sum()), p=residual(p, q))
    return out
