"""The KV cache as a memory budget: model shapes, bytes per token, and what fits on a GPU.

* :class:`ModelConfig` is a model's attention shape; :meth:`ModelConfig.from_hf_config` reads it
  from a Hugging Face ``config.json`` (an explicit ``head_dim`` wins over
  ``hidden_size / num_attention_heads``, as it must for Gemma, Mistral-NeMo and Qwen3).
* :data:`MODELS` holds the shapes of some published models.
* :func:`kv_bytes_per_token` is ``2 · layers · kv_heads · head_dim · bytes per value``, for fp32,
  fp16/bf16 or an fp8 cache (vLLM's ``kv_cache_dtype="fp8"``).
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

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "GB",
    "GIB",
    "MODELS",
    "VLLM_GPU_MEMORY_UTILIZATION",
    "CapacityError",
    "ModelConfig",
    "PagedLayout",
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
#: current releases, 0.9 before vLLM PR #38284 (early 2026).
VLLM_GPU_MEMORY_UTILIZATION = 0.92


def _field(config: Mapping[str, object], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"config.json field {key!r} must be a whole number >= 1, got {value!r}"
                )
            return value
    return None


@dataclass(frozen=True)
class ModelConfig:
    """The attention shape of a model, as in its Hugging Face ``config.json``.

    Example:
        >>> MODELS["Qwen2.5-7B"].attention, MODELS["GPT-2 small"].attention
        ('GQA', 'MHA')
    """

    name: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    params_b: float | None = None

    @property
    def attention(self) -> str:
        """ "MHA", "GQA" or "MQA"."""
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @classmethod
    def from_hf_config(cls, config: Mapping[str, object], name: str = "") -> ModelConfig:
        """The shape from a ``config.json`` dict (``json.load`` it, or paste it as a dict).

        Reads ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads`` (absent:
        one kv head per query head, multi-head attention), ``head_dim`` (absent or null:
        ``hidden_size // num_attention_heads``) and ``max_position_embeddings``. GPT-2's names
        (``n_layer``, ``n_head``, ``n_embd``, ``n_positions``) work too, and a multimodal config's
        ``text_config`` is used when present. Sliding-window layers (Gemma 2 and 3, Mistral) are
        counted as full attention, so the result is an upper bound for those models.

        Example:
            >>> qwen3 = {"num_hidden_layers": 28, "num_attention_heads": 16,
            ...     "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 1024,
            ...     "max_position_embeddings": 40960}
            >>> ModelConfig.from_hf_config(qwen3).head_dim  # not 1024 // 16 = 64
            128
        """
        if not isinstance(config, Mapping):
            raise TypeError(f"from_hf_config needs the config.json as a dict, got {type(config)}")
        text = config.get("text_config")
        c = text if isinstance(text, Mapping) else config
        layers = _field(c, "num_hidden_layers", "n_layer")
        heads = _field(c, "num_attention_heads", "n_head")
        for key, value in (("num_hidden_layers", layers), ("num_attention_heads", heads)):
            if value is None:
                raise ValueError(f"config.json has no {key!r}: paste the model's whole config.json")
        kv_heads = _field(c, "num_key_value_heads", "n_head_kv") or heads
        head_dim = _field(c, "head_dim")
        if head_dim is None:
            hidden = _field(c, "hidden_size", "n_embd")
            if hidden is None:
                raise ValueError("config.json has neither 'head_dim' nor 'hidden_size'")
            head_dim = hidden // heads
        if heads % kv_heads:
            raise ValueError(
                f"num_attention_heads ({heads}) must be a multiple of num_key_value_heads "
                f"({kv_heads})"
            )
        context = _field(c, "max_position_embeddings", "n_positions") or 0
        label = name or str(config.get("_name_or_path") or config.get("model_type") or "model")
        return cls(label, layers, heads, kv_heads, head_dim, context)


#: Published configs (``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads``,
#: ``hidden_size / num_attention_heads``, ``max_position_embeddings``). Llama-3.1-8B has
#: Llama-3-8B's shapes with a 128k context.
MODELS: dict[str, ModelConfig] = {
    m.name: m
    for m in (
        ModelConfig("GPT-2 small", 12, 12, 12, 64, 1024, 0.124),
        ModelConfig("Llama-2-7B", 32, 32, 32, 128, 4096, 6.7),
        ModelConfig("Llama-3-8B", 32, 32, 8, 128, 8192, 8.0),
        ModelConfig("Llama-3.1-8B", 32, 32, 8, 128, 131072, 8.0),
        ModelConfig("Mistral-7B", 32, 32, 8, 128, 32768, 7.2),
        ModelConfig("Qwen2.5-7B", 28, 28, 4, 128, 32768, 7.6),
        ModelConfig("Llama-3-70B", 80, 64, 8, 128, 8192, 70.6),
    )
}

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
    """``2 · layers · kv_heads · head_dim · bytes``: K and V of one token in every layer.

    Example:
        >>> kv_bytes_per_token(MODELS["Llama-2-7B"]) // 1024  # no GQA: 4x Llama-3-8B
        512
        >>> kv_bytes_per_token(MODELS["Llama-3-8B"], "fp8") // 1024  # fp8 halves fp16
        64
    """
    return int(2 * model.layers * model.kv_heads * model.head_dim * _bytes_per_value(dtype))


def kv_cache_bytes(
    model: ModelConfig, tokens: int, batch: int = 1, dtype: str | int = "fp16"
) -> int:
    """KV cache for ``batch`` sequences of ``tokens`` tokens each.

    Example:
        >>> format_bytes(kv_cache_bytes(MODELS["Llama-3.1-8B"], tokens=32_768))
        '4.00 GiB'
    """
    if tokens < 0 or batch < 0:
        raise ValueError("tokens and batch must be >= 0")
    return kv_bytes_per_token(model, dtype) * int(tokens) * int(batch)


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
    current releases (since vLLM PR #42479, May 2026, which fixed "models's" and added the CPU
    backend note); older releases worded it differently.

    Example:
        >>> kv_blocks_that_fit(MODELS["Llama-3-8B"], 2 * GIB, max_seq_len=8192)
        1024
    """
    per_block = kv_bytes_per_token(model, dtype) * block_size
    num_blocks = int(kv_cache_memory // per_block)
    needed = paged_blocks(max_seq_len, block_size).blocks
    if needed > num_blocks:
        fits = min(num_blocks * block_size, max_seq_len)
        estimate = f"the estimated maximum model length is {fits}. " if fits > 0 else ""
        raise CapacityError(
            f"To serve at least one request with the model's max seq len ({max_seq_len}), "
            f"({needed * per_block / GIB:.2f} GiB KV cache is needed, which is larger than the "
            f"available KV cache memory ({kv_cache_memory / GIB:.2f} GiB). "
            + (f"Based on the available memory, {estimate}" if estimate else "")
            + "Try increasing `gpu_memory_utilization` (which also controls CPU memory on the "
            "CPU backend) or decreasing `max_model_len` when initializing the engine. "
            "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
        )
    return num_blocks


def sessions_that_fit(
    model: ModelConfig,
    kv_cache_memory: int,
    tokens: int,
    block_size: int = 16,
    dtype: str | int = "fp16",
) -> int:
    """Whole sessions of ``tokens`` tokens whose caches fit at once, in blocks of ``block_size``.

    Example:
        >>> sessions_that_fit(MODELS["Llama-3.1-8B"], 40 * GIB, tokens=32_768)
        10
    """
    blocks = kv_blocks_that_fit(model, kv_cache_memory, tokens, block_size, dtype)
    return blocks // paged_blocks(tokens, block_size).blocks
