"""A scheduler that batches continuously, admits while blocks last and preempts by recompute.

Follows ``Scheduler.schedule`` and ``update_from_output`` in ``vllm/v1/core/sched/scheduler.py``
(first-come-first-served policy). Each step has a budget of ``max_num_batched_tokens`` tokens
and at most ``max_num_seqs`` running requests. Running requests are served first, in order:
each gets the tokens it still needs (one when decoding; a chunk of its prompt when prefilling,
cut to the budget left: chunked prefill). When the pool has no block for one, the scheduler
preempts the request admitted last: it frees all its blocks, resets it to 0 computed tokens and
puts it back at the head of the waiting queue, to be recomputed later (its freed blocks keep
their hashes, so the part still cached when it returns is a prefix-cache hit). Only when
nothing was preempted in this step are waiting requests admitted, while the token budget, the
sequence limit and the free blocks (after prefix-cache hits) allow.
"""

from __future__ import annotations

import zlib
from collections import deque
from dataclasses import dataclass

from promptdojo.serving.blocks import BLOCK_SIZE
from promptdojo.serving.manager import KVCacheManager, Request


@dataclass(frozen=True)
class SchedulerOutput:
    """What one step runs: tokens per request id, and the requests preempted to make room."""

    num_scheduled_tokens: dict[str, int]
    preempted: tuple[str, ...]

    @property
    def total_num_scheduled_tokens(self) -> int:
        """All tokens of the step: the batch's size in tokens."""
        return sum(self.num_scheduled_tokens.values())


class Scheduler:
    """vLLM V1's scheduling loop over a :class:`KVCacheManager` (no speculative tokens).

    Example:
        >>> s = Scheduler(KVCacheManager(64), max_num_seqs=2, max_num_batched_tokens=48)
        >>> for i in range(3):
        ...     s.add_request(Request(str(i), [i] * 30, max_tokens=2))
        >>> s.schedule().num_scheduled_tokens
        {'0': 30, '1': 18}
    """

    def __init__(
        self,
        kv_cache_manager: KVCacheManager,
        max_num_seqs: int = 256,
        max_num_batched_tokens: int = 2048,
        enable_chunked_prefill: bool = True,
    ) -> None:
        if max_num_seqs < 1 or max_num_batched_tokens < 1:
            raise ValueError("max_num_seqs and max_num_batched_tokens must be >= 1")
        self.kv_cache_manager = kv_cache_manager
        self.max_num_seqs = max_num_seqs
        self.max_num_batched_tokens = max_num_batched_tokens
        self.enable_chunked_prefill = enable_chunked_prefill
        self.waiting: deque[Request] = deque()
        self.running: list[Request] = []
        self.num_preemptions = 0

    def add_request(self, request: Request) -> None:
        """Queue a request at the tail."""
        self.waiting.append(request)

    def _preempt(self, request: Request) -> None:
        self.kv_cache_manager.free(request)
        request.status = "PREEMPTED"
        request.num_computed_tokens = 0
        request.num_preemptions += 1
        self.num_preemptions += 1
        self.waiting.appendleft(request)

    def schedule(self) -> SchedulerOutput:
        """Pick the tokens of one step and allocate their blocks (see the module docstring)."""
        kv = self.kv_cache_manager
        budget = self.max_num_batched_tokens
        scheduled: dict[str, int] = {}
        preempted: list[str] = []
        running = self.running
        i = 0
        while i < len(running) and budget > 0:
            request = running[i]
            num_new = min(request.num_tokens - request.num_computed_tokens, budget)
            while kv.allocate_slots(request, num_new) is None:
                victim = running.pop()  # the request admitted last
                self._preempt(victim)
                preempted.append(victim.request_id)
                if victim is request:
                    break
            else:
                scheduled[request.request_id] = num_new
                budget -= num_new
                i += 1
                continue
            break
        while not preempted and self.waiting and budget > 0:
            if len(self.running) >= self.max_num_seqs:
                break
            request = self.waiting[0]
            hits, num_computed = kv.get_computed_blocks(request)
            num_new = request.num_tokens - num_computed
            if not self.enable_chunked_prefill and num_new > budget:
                break
            num_new = min(num_new, budget)
            if kv.allocate_slots(request, num_new, num_computed, hits) is None:
                break
            self.waiting.popleft()
            request.status = "RUNNING"
            request.num_computed_tokens = num_computed
            self.running.append(request)
            scheduled[request.request_id] = num_new
            budget -= num_new
        for request in self.running:
            request.num_computed_tokens += scheduled.get(request.request_id, 0)
        return SchedulerOutput(scheduled, tuple(preempted))

    def update_from_output(self, output: SchedulerOutput, now: float) -> list[Request]:
        """After the step ran: every request whose cache now covers all its tokens gets one new
        token (a partial prefill chunk gets none); finished requests free their blocks."""
        finished = []
        scheduled = output.num_scheduled_tokens
        for request in [r for r in self.running if r.request_id in scheduled]:
            num_tokens = request.num_tokens
            if request.num_computed_tokens < num_tokens:
                continue  # a prompt chunk: no token yet
            request.output_token_ids.append(_next_token(request.request_id, num_tokens))
            if request.first_token_time is None:
                request.first_token_time = now
            if request.is_finished:
                request.status = "FINISHED"
                request.finish_time = now
                self.kv_cache_manager.free(request)
                self.running.remove(request)
                finished.append(request)
        return finished

    @property
    def has_unfinished_requests(self) -> bool:
        """Whether anything waits or runs."""
        return bool(self.waiting or self.running)


def _next_token(request_id: str, position: int) -> int:
    """A stand-in for the model's sample: deterministic, different per request and position."""
    return (zlib.crc32(request_id.encode()) + position * 7919) % 32_000


__all__ = ["BLOCK_SIZE", "Scheduler", "SchedulerOutput"]
