"""Requests and the KV cache manager: block tables, cache hits, allocation and freeing.

Follows vLLM V1's ``Request`` (``vllm/v1/request.py``) and ``KVCacheManager``
(``vllm/v1/core/kv_cache_manager.py``, with ``vllm/v1/core/single_type_kv_cache_manager.py``).
A request's block table is the list of its blocks in token order: token ``i`` lives in block
``table[i // block_size]`` at offset ``i % block_size``, so its slot in the pool is
``table[i // block_size] * block_size + i % block_size`` (``vllm/v1/worker/block_table.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from promptdojo.serving.blocks import BLOCK_SIZE, BlockPool, KVCacheBlock
from promptdojo.serving.hashing import extend_block_hashes, find_longest_cache_hit


@dataclass(eq=False)
class Request:
    """One request: its prompt, what it has generated, and how far its KV cache reaches.

    ``num_computed_tokens`` counts the tokens whose keys and values are in the cache; a
    preempted request drops to 0 and, when it resumes, computes again those of its tokens
    (prompt and output so far) whose blocks are no longer in the prefix cache. Times are
    seconds of simulated time.
    """

    request_id: str
    prompt_token_ids: list[int]
    max_tokens: int
    arrival_time: float = 0.0
    cache_salt: str | None = None
    output_token_ids: list[int] = field(default_factory=list)
    num_computed_tokens: int = 0
    status: str = "WAITING"
    num_preemptions: int = 0
    first_token_time: float | None = None
    finish_time: float | None = None
    _hashes: list[bytes] = field(default_factory=list, repr=False)

    @property
    def num_tokens(self) -> int:
        """Prompt plus output tokens so far."""
        return len(self.prompt_token_ids) + len(self.output_token_ids)

    @property
    def all_token_ids(self) -> list[int]:
        """Prompt then output."""
        return [*self.prompt_token_ids, *self.output_token_ids]

    def block_hashes(self, block_size: int = BLOCK_SIZE) -> list[bytes]:
        """The chained hashes of the request's full blocks, extended as tokens arrive."""
        full = self.num_tokens // block_size
        if len(self._hashes) < full:
            extend_block_hashes(self._hashes, self.all_token_ids, block_size, self.cache_salt)
        return self._hashes[:full]

    @property
    def is_finished(self) -> bool:
        """Whether it has generated ``max_tokens`` tokens."""
        return len(self.output_token_ids) >= self.max_tokens


def slot_mapping(
    block_table: Sequence[int], positions: Sequence[int], block_size: int = BLOCK_SIZE
):
    """Where each position's key and value live in the pool: ``block * block_size + offset``.

    Example:
        >>> slot_mapping([7, 2], [0, 15, 16, 20])
        [112, 127, 32, 36]
    """
    return [block_table[p // block_size] * block_size + p % block_size for p in positions]


class KVCacheManager:
    """Hands blocks to requests and takes them back (``vllm/v1/core/kv_cache_manager.py``).

    Example:
        >>> kv = KVCacheManager(num_gpu_blocks=10)
        >>> r = Request("a", list(range(40)), max_tokens=4)
        >>> [b.block_id for b in kv.allocate_slots(r, 40)], kv.block_pool.get_num_free_blocks()
        ([1, 2, 3], 6)
        >>> s = Request("b", list(range(40)), max_tokens=4)
        >>> hits, n = kv.get_computed_blocks(s); [b.block_id for b in hits], n
        ([1, 2], 32)
    """

    def __init__(
        self, num_gpu_blocks: int, block_size: int = BLOCK_SIZE, enable_caching: bool = True
    ) -> None:
        self.block_size = block_size
        self.enable_caching = enable_caching
        self.block_pool = BlockPool(num_gpu_blocks, enable_caching)
        self.req_to_blocks: dict[str, list[KVCacheBlock]] = {}
        self.num_cached_block: dict[str, int] = {}
        self.prefix_cache_queries = 0
        self.prefix_cache_hits = 0

    def get_block_ids(self, request_id: str) -> list[int]:
        """The request's block table."""
        return [b.block_id for b in self.req_to_blocks.get(request_id, [])]

    def get_computed_blocks(self, request: Request) -> tuple[list[KVCacheBlock], int]:
        """The cached blocks a new request can reuse, and the tokens they cover.

        At most ``num_tokens - 1`` tokens count: even when the whole prompt is cached, the last
        token is computed again, because its logits give the first output token.
        """
        if not self.enable_caching:
            return [], 0
        hashes = request.block_hashes(self.block_size)
        hits = find_longest_cache_hit(
            hashes, self.block_pool, request.num_tokens - 1, self.block_size
        )
        self.prefix_cache_queries += request.num_tokens
        self.prefix_cache_hits += len(hits) * self.block_size
        return hits, len(hits) * self.block_size

    def allocate_slots(
        self,
        request: Request,
        num_new_tokens: int,
        num_new_computed_tokens: int = 0,
        new_computed_blocks: Sequence[KVCacheBlock] = (),
    ) -> list[KVCacheBlock] | None:
        """Blocks for ``num_new_tokens`` more tokens of ``request``; ``None`` if too few are free.

        ``new_computed_blocks`` are prefix-cache hits (from :meth:`get_computed_blocks`); a hit
        on a free block takes it out of the free queue, so it counts against the free blocks.
        """
        request_id, block_size = request.request_id, self.block_size
        total = request.num_computed_tokens + num_new_computed_tokens + num_new_tokens
        blocks = self.req_to_blocks.get(request_id)
        if blocks is None:
            blocks = self.req_to_blocks[request_id] = []
        cached = self.num_cached_block.get(request_id, 0)
        if (
            not new_computed_blocks
            and total <= len(blocks) * block_size
            and (total // block_size <= cached or not self.enable_caching)
        ):
            return []  # the common decode step: the token fits, and no block became full
        num_full = min(total, request.num_tokens) // block_size
        num_required = -(-total // block_size)
        num_new_blocks = max(0, num_required - len(blocks) - len(new_computed_blocks))
        evictable = sum(1 for b in new_computed_blocks if b.ref_cnt == 0)
        if num_new_blocks + evictable > self.block_pool.get_num_free_blocks():
            if not blocks:
                del self.req_to_blocks[request_id]
            return None
        if new_computed_blocks:
            self.block_pool.touch(new_computed_blocks)
            blocks.extend(new_computed_blocks)
        new_blocks = self.block_pool.get_new_blocks(num_new_blocks)
        blocks.extend(new_blocks)
        if self.enable_caching and num_full > cached:
            hashes = request.block_hashes(block_size)
            self.block_pool.cache_full_blocks(blocks, hashes, cached, num_full)
            self.num_cached_block[request_id] = num_full
        return new_blocks

    def free(self, request: Request) -> None:
        """Let go of a request's blocks, last block first, so its tail is evicted first."""
        blocks = self.req_to_blocks.pop(request.request_id, [])
        self.num_cached_block.pop(request.request_id, None)
        self.block_pool.free_blocks(reversed(blocks))

    @property
    def usage(self) -> float:
        """The fraction of usable blocks held by requests."""
        return self.block_pool.get_usage()
