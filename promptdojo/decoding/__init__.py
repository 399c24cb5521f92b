"""Decoding: how the next token is picked from a model's logits.

Every function follows a named engine's semantics, so the numbers agree with what people run:

* temperature, top-k, top-p, min-p and the repetition penalty follow Hugging Face transformers'
  logits processors and warpers (``TemperatureLogitsWarper``, ``TopKLogitsWarper``,
  ``TopPLogitsWarper``, ``MinPLogitsWarper``, ``RepetitionPenaltyLogitsProcessor``);
* temperature 0 means greedy, as in vLLM;
* filters mark removed tokens with ``-inf``, as the warpers do, so they compose.

The processing order is explicit: :data:`HF_ORDER` (temperature → top-k → top-p → min-p) by default,
:data:`LLAMA_CPP_ORDER` (temperature last) as llama.cpp's default chain runs them, and any other
order can be passed to :func:`process_logits`; a warper that is switched on but left out of the
order is an error, never silently skipped.

Example:
    >>> import numpy as np
    >>> logits = np.log([0.7, 0.2, 0.1])
    >>> greedy(logits)
    0
    >>> np.round(softmax(logits, temperature=0.5), 3)
    array([0.907, 0.074, 0.019])
"""

from __future__ import annotations

from promptdojo.decoding.generation import BeamResult, beam_search, draw_counts, generate
from promptdojo.decoding.sampling import (
    HF_ORDER,
    LLAMA_CPP_ORDER,
    Sampler,
    apply_temperature,
    greedy,
    log_softmax,
    min_p_filter,
    process_logits,
    repetition_penalty,
    sample,
    softmax,
    top_k_filter,
    top_p_filter,
)

__all__ = [
    "HF_ORDER",
    "LLAMA_CPP_ORDER",
    "BeamResult",
    "Sampler",
    "apply_temperature",
    "beam_search",
    "draw_counts",
    "generate",
    "greedy",
    "log_softmax",
    "min_p_filter",
    "process_logits",
    "repetition_penalty",
    "sample",
    "softmax",
    "top_k_filter",
    "top_p_filter",
]
