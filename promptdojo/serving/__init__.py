"""Serving, built piece by piece as vLLM V1 builds it: a paged KV cache with reference counts and
an LRU free queue, prefix caching's hash chain, a scheduler that batches continuously, admits
while blocks last and preempts by recompute, and speculative decoding's rejection sampling.

Each module names the vLLM file it follows. Everything is numpy and the standard library, and
deterministic: the same figures in CPython and in Pyodide.

Example:
    >>> pool = BlockPool(num_gpu_blocks=5)
    >>> [b.block_id for b in pool.get_new_blocks(2)], pool.get_num_free_blocks()
    ([1, 2], 2)
"""

from __future__ import annotations

from promptdojo.serving.blocks import BLOCK_SIZE, BlockPool, FreeKVCacheBlockQueue, KVCacheBlock
from promptdojo.serving.hashing import (
    NONE_HASH,
    find_longest_cache_hit,
    hash_block_tokens,
    hash_request_tokens,
)
from promptdojo.serving.manager import KVCacheManager, Request, slot_mapping
from promptdojo.serving.scheduler import Scheduler, SchedulerOutput
from promptdojo.serving.sim import GPU, Result, make_requests, simulate, simulate_static
from promptdojo.serving.speculative import (
    acceptance_rate,
    expected_tokens_per_pass,
    rejection_sample,
    residual,
    speculative_draws,
)

__all__ = [
    "BLOCK_SIZE",
    "GPU",
    "NONE_HASH",
    "BlockPool",
    "FreeKVCacheBlockQueue",
    "KVCacheBlock",
    "KVCacheManager",
    "Request",
    "Result",
    "Scheduler",
    "SchedulerOutput",
    "acceptance_rate",
    "expected_tokens_per_pass",
    "find_longest_cache_hit",
    "hash_block_tokens",
    "hash_request_tokens",
    "make_requests",
    "rejection_sample",
    "residual",
    "simulate",
    "simulate_static",
    "slot_mapping",
    "speculative_draws",
]
