"""promptdojo.serving: the pool's invariants under any sequence of operations, the scheduler's
vLLM semantics, and speculative decoding's exactness."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptdojo.kvcache import KVCache
from promptdojo.serving import (
    KVCacheManager,
    Request,
    Scheduler,
    expected_tokens_per_pass,
    hash_request_tokens,
    make_requests,
    rejection_sample,
    simulate,
    simulate_static,
    speculative_draws,
)


def check_pool(kv: KVCacheManager, live: dict[str, Request]) -> None:
    """No block both free and held; ref counts equal the holders; the cache map is honest."""
    pool = kv.block_pool
    free = {b.block_id for b in pool.free_block_queue.get_all_free_blocks()}
    holders: dict[int, int] = {}
    for blocks in kv.req_to_blocks.values():
        for b in blocks:
            holders[b.block_id] = holders.get(b.block_id, 0) + 1
    assert not free & set(holders), "a block is both free and held"
    for block in pool.blocks[1:]:
        assert block.ref_cnt == holders.get(block.block_id, 0), block
        assert (block.ref_cnt == 0) == (block.block_id in free), block
    assert len(free) + len(holders) == pool.num_gpu_blocks - 1
    for block_hash, block in pool.cached_block_hash_to_block.items():
        assert block.block_hash == block_hash
    assert set(kv.req_to_blocks) <= set(live)


# A few prompts that share prefixes, so hits, shared blocks and evictions all happen.
BASE = list(range(100, 180))
PROMPTS = [BASE[:n] + tail for n in (0, 16, 33, 64) for tail in ([], [1] * 7, [2] * 20)]


@settings(max_examples=120, deadline=None)
@given(
    st.integers(4, 24),
    st.lists(
        st.tuples(st.sampled_from(["add", "grow", "free"]), st.integers(0, len(PROMPTS) - 1)),
        max_size=40,
    ),
)
def test_pool_invariants_hold_under_any_operations(num_blocks, ops) -> None:
    kv = KVCacheManager(num_blocks)
    live: dict[str, Request] = {}
    for n, (op, k) in enumerate(ops):
        if op == "add" and PROMPTS[k]:
            r = Request(f"r{n}", list(PROMPTS[k]), max_tokens=64)
            hits, computed = kv.get_computed_blocks(r)
            # hits never exceed the request's full blocks, nor all of its tokens
            assert len(hits) <= r.num_tokens // 16
            assert computed < r.num_tokens
            if kv.allocate_slots(r, r.num_tokens - computed, computed, hits) is not None:
                r.num_computed_tokens = r.num_tokens
                live[r.request_id] = r
        elif op == "grow" and live:
            r = list(live.values())[k % len(live)]
            r.output_token_ids.append(k)
            if kv.allocate_slots(r, 1) is not None:
                r.num_computed_tokens += 1
            else:
                r.output_token_ids.pop()
        elif op == "free" and live:
            kv.free(live.pop(list(live)[k % len(live)]))
        check_pool(kv, live)
    for r in list(live.values()):
        kv.free(r)
    check_pool(kv, {})
    assert kv.block_pool.get_num_free_blocks() == num_blocks - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=70), st.integers(0, 69), st.integers(1, 9))
def test_one_changed_token_misses_every_later_block(tokens, where, new) -> None:
    changed = list(tokens)
    if where < len(changed):
        changed[where] = (changed[where] + new) % 10
    a, b = hash_request_tokens(tokens), hash_request_tokens(changed)
    assert len(a) == len(tokens) // 16
    first_diff = where // 16 if where < len(tokens) else len(a)
    assert a[:first_diff] == b[:first_diff]
    assert all(x != y for x, y in zip(a[first_diff:], b[first_diff:], strict=True))


def test_cache_salt_isolates_tenants() -> None:
    tokens = list(range(64))
    assert hash_request_tokens(tokens) != hash_request_tokens(tokens, cache_salt="a")
    salted = hash_request_tokens(tokens, cache_salt="a")
    assert salted == hash_request_tokens(tokens, cache_salt="a")
    assert all(
        x != y for x, y in zip(salted, hash_request_tokens(tokens, cache_salt="b"), strict=True)
    )


def test_lru_evicts_the_block_freed_longest_ago_tail_first() -> None:
    kv = KVCacheManager(7)  # 6 usable
    a, b = Request("a", list(range(48)), 1), Request("b", list(range(500, 548)), 1)
    kv.allocate_slots(a, 48)
    kv.allocate_slots(b, 48)
    kv.free(a)
    kv.free(b)
    order = [blk.block_id for blk in kv.block_pool.free_block_queue.get_all_free_blocks()]
    assert order == [3, 2, 1, 6, 5, 4]  # a's tail first, then b's tail
    c = Request("c", [*list(range(1000, 1016)), 0], 1)
    kv.allocate_slots(c, 17)  # two new blocks: evicts a's last two
    assert kv.get_computed_blocks(Request("a2", [*list(range(48)), 0], 1))[1] == 16
    assert kv.get_computed_blocks(Request("b2", [*list(range(500, 548)), 0], 1))[1] == 48


def test_a_cache_hit_on_a_held_block_shares_it() -> None:
    kv = KVCacheManager(16)
    a, b = Request("a", list(range(40)), 1), Request("b", list(range(40)) + [7] * 9, 1)
    kv.allocate_slots(a, 40)
    hits, n = kv.get_computed_blocks(b)
    kv.allocate_slots(b, b.num_tokens - n, n, hits)
    assert kv.get_block_ids("a")[:2] == kv.get_block_ids("b")[:2]
    assert [blk.ref_cnt for blk in hits] == [2, 2]
    kv.free(a)
    assert [blk.ref_cnt for blk in hits] == [1, 1]


def test_preemption_frees_the_last_admitted_and_recomputes() -> None:
    kv = KVCacheManager(9)  # 8 usable blocks
    s = Scheduler(kv, max_num_seqs=8, max_num_batched_tokens=1000)
    for i in range(2):
        s.add_request(Request(f"r{i}", [i] * 64, max_tokens=40))
    out = s.schedule()
    assert out.num_scheduled_tokens == {"r0": 64, "r1": 64}
    s.update_from_output(out, 1.0)
    out = s.schedule()  # both need a 5th block; only r0 gets one
    assert out.preempted == ("r1",)
    assert out.num_scheduled_tokens == {"r0": 1}
    r1 = s.waiting[0]
    assert r1.num_computed_tokens == 0
    assert r1.num_preemptions == 1
    assert len(r1.output_token_ids) == 1  # kept: recomputed, not regenerated


def test_chunked_prefill_splits_a_long_prompt_to_the_token_budget() -> None:
    s = Scheduler(KVCacheManager(64), max_num_batched_tokens=100)
    s.add_request(Request("long", [1] * 250, 2))
    sizes = []
    for t in range(4):
        out = s.schedule()
        sizes.append(out.num_scheduled_tokens["long"])
        s.update_from_output(out, float(t))
    assert sizes == [100, 100, 50, 1]
    s = Scheduler(KVCacheManager(64), max_num_batched_tokens=100, enable_chunked_prefill=False)
    s.add_request(Request("long", [1] * 250, 2))
    assert s.schedule().num_scheduled_tokens == {}


def test_simulation_is_deterministic_and_continuous_beats_static() -> None:
    reqs = make_requests(48, seed=3)
    a, b = simulate(reqs, num_gpu_blocks=400), simulate(reqs, num_gpu_blocks=400)
    assert (a.makespan, a.steps, a.num_preemptions) == (b.makespan, b.steps, b.num_preemptions)
    assert a.output_tokens == sum(r.max_tokens for r in reqs)
    static = simulate_static(reqs, batch_size=16)
    assert simulate(reqs, max_num_seqs=16).throughput > static.throughput
    assert a.num_preemptions > 0
    assert simulate(reqs, num_gpu_blocks=4000).num_preemptions == 0


def test_a_request_larger_than_the_pool_is_reported() -> None:
    with pytest.raises(ValueError, match="needs 7 blocks"):
        simulate([Request("big", [1] * 100, 2)], num_gpu_blocks=4)


def test_expected_tokens_matches_a_simulation() -> None:
    rng = np.random.default_rng(0)
    for alpha, gamma in ((0.6, 3), (0.9, 5)):
        accepted = rng.random((100_000, gamma)) < alpha
        tokens = np.where(accepted.all(1), gamma, accepted.argmin(1)) + 1
        assert tokens.mean() == pytest.approx(expected_tokens_per_pass(alpha, gamma), rel=0.01)


def test_rejection_sampling_keeps_the_target_distribution() -> None:
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6) * 0.3)
    x = speculative_draws(p, q, 300_000, rng)
    assert np.abs(np.bincount(x, minlength=6) / x.size - p).max() < 0.005
    firsts = [
        rejection_sample(np.stack([p, p]), q[None], np.array([rng.choice(6, p=q)]), rng)[0]
        for _ in range(5_000)
    ]
    assert np.abs(np.bincount(firsts, minlength=6) / len(firsts) - p).max() < 0.03


def test_rollback_with_truncate_equals_never_having_drafted() -> None:
    cache = KVCache(n_layers=1, n_kv_heads=1, head_dim=2)
    cache.append(0, np.ones((1, 5, 2)), np.ones((1, 5, 2)))
    cache.append(0, np.full((1, 4, 2), 9.0), np.full((1, 4, 2), 9.0))  # 4 drafts
    cache.truncate(5 + 2)  # two accepted
    k, _ = cache.append(0, np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))
    assert k.shape[1] == 8
    assert (k[0, 5:7] == 9).all()
    assert (k[0, 7] == 0).all()
