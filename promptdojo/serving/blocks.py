"""KV blocks, the free queue that doubles as an LRU list, and the block pool.

Follows vLLM V1: ``KVCacheBlock`` and ``FreeKVCacheBlockQueue`` in
``vllm/v1/core/kv_cache_utils.py``, ``BlockPool`` in ``vllm/v1/core/block_pool.py``. A block holds
the keys and values of ``BLOCK_SIZE`` consecutive tokens of one request. A block no request holds
(reference count 0) sits in the free queue, and keeps its contents and hash until it is handed
out again: a later request with the same prefix can take it back (a prefix-cache hit). Blocks
are handed out from the head of the queue and freed blocks go to its tail, so the block evicted
first is the one freed longest ago (least recently used).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Tokens per block: vLLM's ``CacheConfig.DEFAULT_BLOCK_SIZE`` (``vllm/config/cache.py``), used
#: when no block size is given (some attention backends and hybrid models choose larger ones).
BLOCK_SIZE = 16


@dataclass(eq=False)
class KVCacheBlock:
    """One block of the pool (``KVCacheBlock`` in ``vllm/v1/core/kv_cache_utils.py``).

    ``ref_cnt`` counts the requests that hold it; ``block_hash`` is set once the block is full
    and cached, and cleared when the block is evicted for reuse.
    """

    block_id: int
    ref_cnt: int = 0
    block_hash: bytes | None = None
    is_null: bool = False

    def __repr__(self) -> str:
        tag = f", hash={self.block_hash.hex()[:8]}" if self.block_hash else ""
        return f"KVCacheBlock({self.block_id}, ref_cnt={self.ref_cnt}{tag})"


class FreeKVCacheBlockQueue:
    """The free blocks, in eviction order (``FreeKVCacheBlockQueue``, kv_cache_utils.py).

    vLLM links the blocks into a doubly linked list so that a cached block can be taken out of
    the middle in O(1) when a request hits it; an ordered dict gives the same O(1) operations.

    Example:
        >>> q = FreeKVCacheBlockQueue([KVCacheBlock(i) for i in range(4)])
        >>> q.popleft().block_id, q.num_free_blocks
        (0, 3)
        >>> q.remove(q.get_all_free_blocks()[1]); [b.block_id for b in q.get_all_free_blocks()]
        [1, 3]
    """

    def __init__(self, blocks: Iterable[KVCacheBlock]) -> None:
        self._queue: OrderedDict[int, KVCacheBlock] = OrderedDict((b.block_id, b) for b in blocks)

    @property
    def num_free_blocks(self) -> int:
        """How many blocks are free."""
        return len(self._queue)

    def __contains__(self, block: KVCacheBlock) -> bool:
        return block.block_id in self._queue

    def popleft(self) -> KVCacheBlock:
        """Take the block at the head: the least recently freed."""
        if not self._queue:
            raise ValueError("no free blocks left")
        return self._queue.popitem(last=False)[1]

    def popleft_n(self, n: int) -> list[KVCacheBlock]:
        """Take ``n`` blocks from the head."""
        if n > len(self._queue):
            raise ValueError(f"asked for {n} blocks, only {len(self._queue)} are free")
        return [self._queue.popitem(last=False)[1] for _ in range(n)]

    def remove(self, block: KVCacheBlock) -> None:
        """Take ``block`` out of the middle (a cache hit on a free block)."""
        del self._queue[block.block_id]

    def append(self, block: KVCacheBlock) -> None:
        """Put a freed block at the tail: evicted last."""
        self._queue[block.block_id] = block

    def append_n(self, blocks: Iterable[KVCacheBlock]) -> None:
        """Put several freed blocks at the tail, in order."""
        for block in blocks:
            self.append(block)

    def get_all_free_blocks(self) -> list[KVCacheBlock]:
        """Every free block, head first."""
        return list(self._queue.values())


class BlockPool:
    """All KV blocks of one GPU, the free queue and the prefix cache.

    Follows ``BlockPool`` in ``vllm/v1/core/block_pool.py``.

    Block 0 is the null block, as in vLLM: it is never handed out, so ``num_gpu_blocks - 1``
    blocks are usable. ``cached_block_hash_to_block`` maps the hash of a full block's contents
    (see :mod:`promptdojo.serving.hashing`) to the block that holds them; vLLM may keep several
    blocks under one hash, this pool keeps the first.

    Example:
        >>> pool = BlockPool(8)
        >>> a = pool.get_new_blocks(3); [b.block_id for b in a], pool.get_num_free_blocks()
        ([1, 2, 3], 4)
        >>> pool.free_blocks(reversed(a)); pool.get_num_free_blocks()
        7
    """

    def __init__(self, num_gpu_blocks: int, enable_caching: bool = True) -> None:
        if num_gpu_blocks < 2:
            raise ValueError(
                f"a pool needs at least 2 blocks (one is the null block), got {num_gpu_blocks}"
            )
        self.num_gpu_blocks = int(num_gpu_blocks)
        self.enable_caching = enable_caching
        self.blocks = [KVCacheBlock(i) for i in range(self.num_gpu_blocks)]
        self.free_block_queue = FreeKVCacheBlockQueue(self.blocks)
        self.cached_block_hash_to_block: dict[bytes, KVCacheBlock] = {}
        self.null_block = self.free_block_queue.popleft()
        self.null_block.is_null = True
        self.evictions = 0

    def get_cached_block(self, block_hash: bytes) -> KVCacheBlock | None:
        """The block holding the full block whose hash is ``block_hash``, if still cached."""
        return self.cached_block_hash_to_block.get(block_hash)

    def cache_full_blocks(
        self,
        blocks: Sequence[KVCacheBlock],
        block_hashes: Sequence[bytes],
        num_cached_blocks: int,
        num_full_blocks: int,
    ) -> None:
        """Record the hashes of ``blocks[num_cached_blocks:num_full_blocks]``, newly full."""
        if not self.enable_caching:
            return
        for block, block_hash in zip(
            blocks[num_cached_blocks:num_full_blocks],
            block_hashes[num_cached_blocks:num_full_blocks],
            strict=True,
        ):
            if block.block_hash is not None:
                continue
            block.block_hash = block_hash
            self.cached_block_hash_to_block.setdefault(block_hash, block)

    def get_new_blocks(self, num_blocks: int) -> list[KVCacheBlock]:
        """Hand out ``num_blocks`` blocks from the head of the free queue, evicting their
        cached contents; each gets a reference count of 1."""
        if num_blocks > self.get_num_free_blocks():
            raise ValueError(
                f"cannot get {num_blocks} free blocks from the pool "
                f"({self.get_num_free_blocks()} free)"
            )
        blocks = self.free_block_queue.popleft_n(num_blocks)
        for block in blocks:
            self._maybe_evict_cached_block(block)
            block.ref_cnt += 1
        return blocks

    def _maybe_evict_cached_block(self, block: KVCacheBlock) -> bool:
        """Forget the cached contents of a block about to be written over."""
        if block.block_hash is None:
            return False
        if self.cached_block_hash_to_block.get(block.block_hash) is block:
            del self.cached_block_hash_to_block[block.block_hash]
        block.block_hash = None
        self.evictions += 1
        return True

    def touch(self, blocks: Iterable[KVCacheBlock]) -> None:
        """A request takes cached blocks: one more holder each, and out of the free queue."""
        for block in blocks:
            if block.ref_cnt == 0 and not block.is_null:
                self.free_block_queue.remove(block)
            block.ref_cnt += 1

    def free_blocks(self, ordered_blocks: Iterable[KVCacheBlock]) -> None:
        """A request lets go of blocks; those nobody holds any more join the free queue's tail
        in the given order (vLLM frees a request's blocks last-first, so its tail goes first)."""
        for block in ordered_blocks:
            if block.ref_cnt <= 0:
                raise ValueError(f"block {block.block_id} is freed more often than it was taken")
            block.ref_cnt -= 1
            if block.ref_cnt == 0 and not block.is_null:
                self.free_block_queue.append(block)

    def get_num_free_blocks(self) -> int:
        """Blocks that can be handed out (cached or not)."""
        return self.free_block_queue.num_free_blocks

    def get_usage(self) -> float:
        """The fraction of usable blocks held by requests."""
        usable = self.num_gpu_blocks - 1
        return 1.0 - self.get_num_free_blocks() / usable
