"""Simulated serving: a queue of requests, a GPU cost model, continuous and static batching.

The clock is a roofline (the first lesson's bandwidth model, plus arithmetic): one step reads
all the weights once and each scheduled request's cached keys and values, and does two
floating-point operations per weight per token in the batch. It takes the longer of the two
times. Decode steps (one token per request) are bound by the reads, long prefill steps by the
arithmetic. Attention's own arithmetic and kernel launch overheads are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from promptdojo.serving.blocks import BLOCK_SIZE
from promptdojo.serving.manager import KVCacheManager, Request
from promptdojo.serving.scheduler import Scheduler, SchedulerOutput


@dataclass(frozen=True)
class GPU:
    """A GPU serving one model. Defaults: Llama-3.1-8B in bf16 on an A100 80GB (SXM), whose
    data sheet gives 2,039 GB/s and 312 TFLOP/s of dense bf16; 128 KiB of fp16 KV per token."""

    params: float = 8.03e9
    bytes_per_param: float = 2.0
    bandwidth: float = 2.039e12
    flops: float = 312e12
    kv_bytes_per_token: int = 131_072

    def step_time(self, num_tokens: int, context_tokens: int) -> float:
        """Seconds for one step over ``num_tokens`` new tokens that read ``context_tokens``
        cached tokens in all."""
        read = (
            self.params * self.bytes_per_param + context_tokens * self.kv_bytes_per_token
        ) / self.bandwidth
        compute = 2.0 * self.params * num_tokens / self.flops
        return max(read, compute)


def make_requests(
    n: int, seed: int = 0, prompt: tuple[int, int] = (32, 1024), output: tuple[int, int] = (16, 512)
) -> list[Request]:
    """``n`` requests whose prompt and output lengths are drawn log-uniformly in the ranges
    (many short, a few long, as in chat traffic), all arriving at time 0. Deterministic in
    ``seed``.

    Example:
        >>> [(len(r.prompt_token_ids), r.max_tokens) for r in make_requests(3, seed=0)]
        [(290, 16), (81, 268), (36, 378)]
    """
    rng = np.random.default_rng(seed)
    p = np.exp(rng.uniform(np.log(prompt[0]), np.log(prompt[1]), n)).astype(int)
    o = np.exp(rng.uniform(np.log(output[0]), np.log(output[1]), n)).astype(int)
    tokens = rng.integers(0, 32_000, int(p.sum()))
    starts = np.concatenate([[0], np.cumsum(p)])
    return [
        Request(f"r{i}", tokens[starts[i] : starts[i + 1]].tolist(), int(o[i])) for i in range(n)
    ]


@dataclass
class Result:
    """What a simulated run measured."""

    requests: list[Request]
    makespan: float
    steps: int
    num_preemptions: int = 0
    usage: list[float] = field(default_factory=list)
    batch_tokens: list[int] = field(default_factory=list)

    @property
    def output_tokens(self) -> int:
        """Tokens generated in all."""
        return sum(len(r.output_token_ids) for r in self.requests)

    @property
    def throughput(self) -> float:
        """Output tokens per second over the whole run."""
        return self.output_tokens / self.makespan

    def ttft(self) -> np.ndarray:
        """Time to first token of each request (arrival to first output token), in seconds."""
        return np.array([r.first_token_time - r.arrival_time for r in self.requests])

    def tpot(self) -> np.ndarray:
        """Time per output token after the first, per request with more than one, in seconds."""
        return np.array(
            [
                (r.finish_time - r.first_token_time) / (len(r.output_token_ids) - 1)
                for r in self.requests
                if len(r.output_token_ids) > 1
            ]
        )

    def summary(self) -> str:
        """Throughput, median and 90th-percentile TTFT, median TPOT, preemptions."""
        t, p = self.ttft(), self.tpot()
        return (
            f"{self.throughput:7,.0f} tok/s | TTFT median {np.median(t):6.2f} s, "
            f"p90 {np.percentile(t, 90):6.2f} s | TPOT median {1000 * np.median(p):5.1f} ms | "
            f"{self.steps:,} steps, {self.num_preemptions} preemptions"
        )


def _fresh(requests: list[Request]) -> list[Request]:
    return [
        Request(r.request_id, list(r.prompt_token_ids), r.max_tokens, r.arrival_time, r.cache_salt)
        for r in requests
    ]


def simulate(
    requests: list[Request],
    num_gpu_blocks: int = 4096,
    max_num_seqs: int = 256,
    max_num_batched_tokens: int = 2048,
    enable_chunked_prefill: bool = True,
    enable_prefix_caching: bool = True,
    gpu: GPU = GPU(),
    block_size: int = BLOCK_SIZE,
) -> Result:
    """Continuous batching: vLLM's scheduler over fresh copies of ``requests`` until all finish.

    Example:
        >>> r = simulate(make_requests(8), num_gpu_blocks=512)
        >>> r.output_tokens == sum(q.max_tokens for q in make_requests(8)), r.num_preemptions
        (True, 0)
    """
    requests = _fresh(requests)
    kv = KVCacheManager(num_gpu_blocks, block_size, enable_prefix_caching)
    sched = Scheduler(kv, max_num_seqs, max_num_batched_tokens, enable_chunked_prefill)
    pending = sorted(requests, key=lambda r: r.arrival_time)
    now, steps, usage, sizes, k = 0.0, 0, [], [], 0
    while k < len(pending) or sched.has_unfinished_requests:
        while k < len(pending) and pending[k].arrival_time <= now:
            sched.add_request(pending[k])
            k += 1
        if not sched.has_unfinished_requests:
            now = pending[k].arrival_time
            continue
        out = sched.schedule()
        if not out.num_scheduled_tokens:
            _stuck(sched, kv)
        size = out.total_num_scheduled_tokens
        now += gpu.step_time(size, _context(sched, out))
        usage.append(kv.usage)
        sizes.append(size)
        sched.update_from_output(out, now)
        steps += 1
    return Result(requests, now, steps, sched.num_preemptions, usage, sizes)


def _context(sched: Scheduler, out: SchedulerOutput) -> int:
    """Cached tokens the step reads: every scheduled request's computed tokens."""
    return sum(
        r.num_computed_tokens for r in sched.running if r.request_id in out.num_scheduled_tokens
    )


def _stuck(sched: Scheduler, kv: KVCacheManager) -> None:
    head = sched.waiting[0]
    need = -(-head.num_tokens // kv.block_size)
    raise ValueError(
        f"request {head.request_id} needs {need} blocks for its {head.num_tokens} tokens and the "
        f"pool has {kv.block_pool.num_gpu_blocks - 1} usable: give it more blocks "
        "(a higher gpu_memory_utilization) or shorter requests"
    )


def simulate_static(requests: list[Request], batch_size: int, gpu: GPU = GPU()) -> Result:
    """Static batching: take ``batch_size`` requests, prefill them together, then decode until
    the longest is done, its finished rows padded along; only then take the next batch.

    Example:
        >>> reqs = make_requests(8)
        >>> r = simulate_static(reqs, batch_size=4)  # steps: the longest output of each batch
        >>> r.steps == max(q.max_tokens for q in reqs[:4]) + max(q.max_tokens for q in reqs[4:])
        True
    """
    requests = _fresh(requests)
    now, steps, sizes = 0.0, 0, []
    for start in range(0, len(requests), batch_size):
        batch = requests[start : start + batch_size]
        longest_prompt = max(len(r.prompt_token_ids) for r in batch)
        now += gpu.step_time(longest_prompt * len(batch), 0)  # padded to the longest prompt
        sizes.append(longest_prompt * len(batch))
        steps += 1
        for r in batch:
            r.output_token_ids.append(0)
            r.first_token_time = now
        longest = max(r.max_tokens for r in batch)
        for i in range(1, longest):
            context = len(batch) * (longest_prompt + i)
            now += gpu.step_time(len(batch), context)
            sizes.append(len(batch))
            steps += 1
            for r in batch:
                if len(r.output_token_ids) < r.max_tokens:
                    r.output_token_ids.append(0)
                    if len(r.output_token_ids) == r.max_tokens:
                        r.finish_time = now
        for r in batch:
            if r.finish_time is None:
                r.finish_time = now
    return Result(requests, now, steps, 0, [], sizes)
