"""The KV cache as a memory budget: bytes per token, and what fits on a GPU.

* :class:`ModelConfig` (from :mod:`promptdojo.kvconfig`) says which layers cache what;
  :meth:`ModelConfig.from_hf_config` reads it from a Hugging Face ``config.json``.
* :func:`kv_bytes_per_token` is what the cache grows by per token: ``2 · kv_heads · head_dim``
  numbers in each full-attention layer (MLA: ``kv_lora_rank + qk_rope_head_dim``), times the
  bytes per number, for fp32, fp16/bf16 or an fp8 cache (vLLM's ``kv_cache_dtype="fp8"``).
* :func:`kv_cache_bytes` adds what sliding-window layers hold (at most a window's worth) and
  :func:`fixed_state_bytes` what linear-attention layers hold (a state that does not grow).
* :func:`kv_cache_budget`, :func:`kv_blocks_that_fit` and :func:`sessions_that_fit` do vLLM's
  start-up arithmetic: memory left for the cache, blocks of 16 tokens, and whole sessions.

Bytes are counted exactly; :func:`format_bytes` prints binary units (GiB = 1024³ bytes), as
nvidia-smi (MiB) and vLLM's logs (GiB) do. A file's size "in GB" usually means 10⁹ bytes, 7% less;
GPU memory is the exception: an "80GB" A100 has 80 GiB (nvidia-smi shows 81,920 MiB).

Example:
    >>> kv_bytes_per_token(MODELS["Llama-3.1-8B"]) // 1024
    128
"""

from __future__ import annotations

from dataclasses import dataclass

from promptdojo.kvconfig import MODELS, ModelConfig, UnsupportedAttention

__all__ = [
    "GB",
    "GIB",
    "MODELS",
    "VLLM_GPU_MEMORY_UTILIZATION",
    "CapacityError",
    "ModelConfig",
    "PagedLayout",
    "UnsupportedAttention",
    "fixed_state_bytes",
    "format_bytes",
    "kv_blocks_that_fit",
    "kv_bytes_per_token",
    "kv_cache_budget",
    "kv_cache_bytes",
    "paged_blocks",
    "sessions_that_fit",
]

#: A gigabyte (10⁹ bytes), as file sizes are usually given; a gibibyte (2³⁰ bytes), as memory is
#: counted by nvidia-smi, vLLM's logs (``GiB_bytes`` in ``vllm/utils/mem_constants.py``) and
#: :func:`format_bytes`.
GB, GIB = 10**9, 1024**3

#: vLLM's default ``gpu_memory_utilization`` (``CacheConfig`` in ``vllm/config/cache.py``): 0.92 in
#: current releases, 0.9 in older ones.
VLLM_GPU_MEMORY_UTILIZATION = 0.92


#: Bytes per cached number. ``fp8`` is vLLM's ``kv_cache_dtype="fp8"`` (e4m3 or e5m2: one byte).
_DTYPE_BYTES = {
    "fp32": 4,
    "fp16": 2,
    "bf16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "int8": 1,
}


def _bytes_per_value(dtype: str | int) -> float:
    if isinstance(dtype, int | float) and not isinstance(dtype, bool):
        if dtype <= 0:
            raise ValueError(f"bytes per value must be > 0, got {dtype}")
        return float(dtype)
    if dtype not in _DTYPE_BYTES:
        raise ValueError(f"unknown cache dtype {dtype!r}; known: {', '.join(_DTYPE_BYTES)}")
    return float(_DTYPE_BYTES[dtype])


def kv_bytes_per_token(model: ModelConfig, dtype: str | int = "fp16") -> int:
    """What the cache grows by per token once the context is long: every full-attention layer's
    ``2 · kv_heads · head_dim`` numbers (MLA: ``kv_lora_rank + qk_rope_head_dim``) times the
    bytes per number. Sliding-window layers stop growing at their window and linear-attention
    layers never grow (:func:`kv_cache_bytes` counts both).

    Example:
        >>> kv_bytes_per_token(MODELS["Llama-2-7B"]) // 1024  # no GQA: 4x Llama-3-8B
        512
        >>> kv_bytes_per_token(MODELS["Llama-3-8B"], "fp8") // 1024  # fp8 halves fp16
        64
        >>> kv_bytes_per_token(MODELS["DeepSeek-V3"], "bf16") / 1024  # 61 x (512 + 64) x 2 B
        68.625
    """
    per_layer = model.numbers_per_token_per_layer
    return int(model.full_layers * per_layer * _bytes_per_value(dtype))


def kv_cache_bytes(
    model: ModelConfig, tokens: int, batch: int = 1, dtype: str | int = "fp16"
) -> int:
    """KV cache for ``batch`` sequences of ``tokens`` tokens each: the full-attention layers hold
    every token, the sliding-window layers at most ``sliding_window`` of them. (A linear-attention
    layer's fixed state is not a KV cache: :func:`fixed_state_bytes`.)

    Example:
        >>> format_bytes(kv_cache_bytes(MODELS["Llama-3.1-8B"], tokens=32_768))
        '4.00 GiB'
        >>> format_bytes(kv_cache_bytes(MODELS["gpt-oss-120b"], tokens=32_768))
        '1.13 GiB'
    """
    if tokens < 0 or batch < 0:
        raise ValueError("tokens and batch must be >= 0")
    per_layer = model.numbers_per_token_per_layer * _bytes_per_value(dtype)
    window = min(int(tokens), model.sliding_window) if model.sliding_layers else 0
    per_sequence = per_layer * (model.full_layers * int(tokens) + model.sliding_layers * window)
    return int(per_sequence) * int(batch)


def fixed_state_bytes(model: ModelConfig, batch: int = 1, dtype: str | int = "bf16") -> int:
    """The state linear-attention layers keep per sequence (0 for other models): it does not grow
    with the context. ``dtype`` is the model's: vLLM keeps the convolution windows in it, and the
    recurrent state too unless the config's ``mamba_ssm_dtype`` (:attr:`ModelConfig.state_dtype`)
    or the ``mamba_ssm_cache_dtype`` option names another; Qwen3.5's config asks for fp32.

    Example:
        >>> format_bytes(fixed_state_bytes(MODELS["Qwen3-Next-80B-A3B"]))
        '37.69 MiB'
    """
    conv = model.linear_conv_state
    recurrent = model.linear_state - conv
    state = _bytes_per_value(model.state_dtype or dtype)
    return int(recurrent * state + conv * _bytes_per_value(dtype)) * int(batch)


def format_bytes(n: float) -> str:
    """Bytes in binary units, e.g. ``'4.00 GiB'``.

    Example:
        >>> format_bytes(131072)
        '128.00 KiB'
    """
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def kv_cache_budget(
    gpu_memory: int,
    weights: int,
    utilization: float = VLLM_GPU_MEMORY_UTILIZATION,
    overhead: int = 0,
) -> int:
    """Bytes vLLM can give the KV cache: ``gpu_memory · utilization − weights − overhead``.

    ``utilization`` is vLLM's ``gpu_memory_utilization`` (default
    :data:`VLLM_GPU_MEMORY_UTILIZATION`); vLLM applies it to the total memory CUDA reports, a
    little less than nvidia-smi shows. ``overhead`` stands for what its profiling run measures at
    start-up (peak activations, CUDA graphs, other buffers).

    Example:
        >>> format_bytes(kv_cache_budget(80 * GIB, weights=16 * GB, overhead=2 * GIB))
        '56.70 GiB'
    """
    if not 0 < utilization <= 1:
        raise ValueError(f"utilization must be within (0, 1], got {utilization!r}")
    left = int(gpu_memory * utilization) - int(weights) - int(overhead)
    if left <= 0:
        raise CapacityError(
            f"No memory is left for the KV cache: {format_bytes(gpu_memory)} x {utilization} "
            f"holds less than the weights ({format_bytes(weights)}) and overhead "
            f"({format_bytes(overhead)}). Use a smaller format for the weights, or a larger GPU."
        )
    return left


@dataclass(frozen=True)
class PagedLayout:
    """How a request's tokens land in fixed-size KV blocks (vLLM's PagedAttention)."""

    tokens: int
    block_size: int
    blocks: int
    wasted_slots: int

    @property
    def utilization(self) -> float:
        """Fraction of allocated slots holding a token."""
        return self.tokens / (self.blocks * self.block_size) if self.blocks else 1.0


def paged_blocks(tokens: int, block_size: int = 16) -> PagedLayout:
    """Blocks a sequence of ``tokens`` needs, and the slots left empty in its last block.

    Example:
        >>> paged_blocks(100, block_size=16)
        PagedLayout(tokens=100, block_size=16, blocks=7, wasted_slots=12)
    """
    if block_size < 1 or tokens < 0:
        raise ValueError("block_size must be >= 1 and tokens >= 0")
    blocks = -(-int(tokens) // int(block_size))
    return PagedLayout(int(tokens), int(block_size), blocks, blocks * block_size - tokens)


class CapacityError(ValueError):
    """The KV cache cannot hold even one sequence of the requested maximum length."""


def _uniform(model: ModelConfig) -> bool:
    return not model.sliding_layers and not model.linear_layers


def kv_blocks_that_fit(
    model: ModelConfig,
    kv_cache_memory: int,
    max_seq_len: int,
    block_size: int = 16,
    dtype: str | int = "fp16",
) -> int:
    """How many KV blocks fit in ``kv_cache_memory``; fails as vLLM does if ``max_seq_len`` won't.

    vLLM's V1 engine (``check_enough_kv_cache_memory`` in ``vllm/v1/core/kv_cache_utils.py``)
    refuses to start when one request of ``max_model_len`` tokens needs more KV cache than it
    has. This does the same arithmetic and raises :class:`CapacityError` in the wording of
    current releases, with the sizes rounded as vLLM's ``format_gib`` rounds them (two decimals,
    no trailing zeros: ``4.0 GiB``). It counts blocks for models whose layers all cache every
    token. For hybrid models vLLM keeps one shared pool of blocks whose pages all have the same
    size in bytes, and gives each group of layers of one kind its own block table into it (its
    hybrid KV cache manager); it adjusts block sizes until the pages match, which this does not
    model, so for those models use :func:`sessions_that_fit`.

    Example:
        >>> kv_blocks_that_fit(MODELS["Llama-3-8B"], 2 * GIB, max_seq_len=8192)
        1024
    """
    if not _uniform(model):
        raise UnsupportedAttention(
            f"{model.name} mixes layer kinds ({model.layout()}); vLLM's shared pool gives each "
            "kind a block table and pages of one size, which kv_blocks_that_fit does not model, "
            "so count whole sessions with sessions_that_fit instead"
        )
    per_block = kv_bytes_per_token(model, dtype) * block_size
    num_blocks = int(kv_cache_memory // per_block)
    needed = paged_blocks(max_seq_len, block_size).blocks
    if needed > num_blocks:
        fits = min(num_blocks * block_size, max_seq_len)
        estimate = f"the estimated maximum model length is {fits}. " if fits > 0 else ""
        raise CapacityError(
            f"To serve at least one request with the model's max seq len ({max_seq_len}), "
            f"({_gib(needed * per_block)} GiB KV cache is needed, which is larger than the "
            f"available KV cache memory ({_gib(kv_cache_memory)} GiB). "
            + (f"Based on the available memory, {estimate}" if estimate else "")
            + "Try increasing `gpu_memory_utilization` (which also controls CPU memory on the "
            "CPU backend) or decreasing `max_model_len` when initializing the engine. "
            "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        )
    return num_blocks


def _gib(n: float) -> float:
    """Bytes in GiB as vLLM's ``format_gib`` (``vllm/utils/mem_utils.py``) prints them."""
    return round(n / GIB, 2)


def sessions_that_fit(
    model: ModelConfig,
    kv_cache_memory: int,
    tokens: int,
    block_size: int = 16,
    dtype: str | int = "fp16",
) -> int:
    """Whole sessions of ``tokens`` tokens whose caches fit at once, in blocks of ``block_size``.

    This is the worst case, every session at its full length at the same time; a paged engine
    hands out blocks as tokens arrive, so shorter sessions leave room for more. For models with
    sliding-window or linear-attention layers a session also holds those layers' window or fixed
    state (:func:`fixed_state_bytes`, in bf16 unless the config keeps the recurrent state wider),
    all from the one pool vLLM shares between its layer groups.

    Example:
        >>> sessions_that_fit(MODELS["Llama-3.1-8B"], 40 * GIB, tokens=32_768)
        10
        >>> sessions_that_fit(MODELS["gpt-oss-120b"], 40 * GIB, tokens=32_768)
        35
    """
    if _uniform(model):
        blocks = kv_blocks_that_fit(model, kv_cache_memory, tokens, block_size, dtype)
        return blocks // paged_blocks(tokens, block_size).blocks
    padded = paged_blocks(tokens, block_size).blocks * block_size
    per_session = kv_cache_bytes(model, padded, dtype=dtype) + fixed_state_bytes(model, 1, "bf16")
    if per_session > kv_cache_memory:
        raise CapacityError(
            f"One session of {tokens} tokens needs {_gib(per_session)} GiB of cache and state, "
            f"more than the {_gib(kv_cache_memory)} GiB available: shorten the context or free "
            "memory."
        )
    return int(kv_cache_memory // per_session)
