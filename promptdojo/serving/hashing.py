"""Prefix caching's hash chain over full blocks (``vllm/v1/core/kv_cache_utils.py``).

vLLM names a full block by a hash of its parent block's hash, its own token ids and its extra
keys (``hash_block_tokens``): ``h_i = H(h_{i-1}, tokens_i, extra_i)``. Because each hash carries
its parent's, two requests share a block's hash only if they agree on every token before it, so
one lookup per block finds the longest shared prefix. Only full blocks are hashed; the tokens of
a last, partial block are never shared. The chain starts from ``NONE_HASH``, and a request's
``cache_salt`` enters the first block's extra keys, so requests with different salts share no
blocks at all (``generate_block_hash_extra_keys``). vLLM hashes with SHA-256 by default
(``prefix_caching_hash_algo`` in ``vllm/config/cache.py``); so does this module, over the token
ids written as little-endian 64-bit integers.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from promptdojo.serving.blocks import BLOCK_SIZE, BlockPool, KVCacheBlock

#: The parent hash of a request's first block. vLLM draws it at random per process unless
#: ``PYTHONHASHSEED`` is set; here it is fixed, so hashes agree in CPython and Pyodide.
NONE_HASH = hashlib.sha256(b"promptdojo.serving NONE_HASH").digest()


def hash_block_tokens(
    parent_block_hash: bytes | None,
    curr_block_token_ids: Sequence[int],
    extra_keys: tuple[str, ...] | None = None,
) -> bytes:
    """``H(parent, tokens, extra keys)``: the 32-byte hash of one full block.

    Example:
        >>> a = hash_block_tokens(NONE_HASH, range(16))
        >>> a == hash_block_tokens(None, list(range(16)))
        True
        >>> a == hash_block_tokens(NONE_HASH, range(16), ("tenant-a",))
        False
    """
    h = hashlib.sha256(parent_block_hash or NONE_HASH)
    tokens = list(curr_block_token_ids)
    h.update(struct.pack(f"<{len(tokens)}q", *tokens))
    if extra_keys:
        h.update(repr(tuple(extra_keys)).encode())
    return h.digest()


def hash_request_tokens(
    token_ids: Sequence[int], block_size: int = BLOCK_SIZE, cache_salt: str | None = None
) -> list[bytes]:
    """The chained hashes of every full block of ``token_ids`` (a last partial block has none).

    Example:
        >>> len(hash_request_tokens(range(40))), len(hash_request_tokens(range(48)))
        (2, 3)
        >>> a, b = hash_request_tokens(range(48)), hash_request_tokens([99, *range(1, 48)])
        >>> [x == y for x, y in zip(a, b)]
        [False, False, False]
    """
    return extend_block_hashes([], token_ids, block_size, cache_salt)


def extend_block_hashes(
    hashes: list[bytes],
    token_ids: Sequence[int],
    block_size: int = BLOCK_SIZE,
    cache_salt: str | None = None,
) -> list[bytes]:
    """Append to ``hashes`` (those of the first blocks of ``token_ids``) the hashes of the full
    blocks after them, as vLLM's request block hasher does when tokens arrive."""
    parent = hashes[-1] if hashes else NONE_HASH
    for start in range(len(hashes) * block_size, len(token_ids) - block_size + 1, block_size):
        extra = (cache_salt,) if (start == 0 and cache_salt) else None
        parent = hash_block_tokens(parent, token_ids[start : start + block_size], extra)
        hashes.append(parent)
    return hashes


def find_longest_cache_hit(
    block_hashes: Sequence[bytes],
    block_pool: BlockPool,
    max_length: int,
    block_size: int = BLOCK_SIZE,
) -> list[KVCacheBlock]:
    """The cached blocks of the longest prefix of ``block_hashes`` within ``max_length`` tokens.

    Stops at the first miss: a later block can only be reused if every block before it is
    (``find_longest_cache_hit`` in ``vllm/v1/core/single_type_kv_cache_manager.py``).
    """
    hits: list[KVCacheBlock] = []
    for block_hash in block_hashes[: max_length // block_size]:
        block = block_pool.get_cached_block(block_hash)
        if block is None:
            break
        hits.append(block)
    return hits
