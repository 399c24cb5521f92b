"""A model's attention layout, read from its Hugging Face ``config.json``, and published examples.

:class:`ModelConfig` says which layers keep a key-value cache and how much each keeps per token:

* ordinary attention (MHA, GQA, MQA): a key and a value of ``head_dim`` numbers per kv head;
* multi-head latent attention (MLA: DeepSeek-V2/V3/R1, Kimi K2): one compressed latent of
  ``kv_lora_rank`` numbers plus a shared rotary key of ``qk_rope_head_dim`` numbers, whatever the
  number of heads (vLLM's MLA backends cache exactly these ``kv_lora_rank + qk_rope_head_dim``);
* sliding-window layers (gpt-oss, Gemma 2 and 3, Mistral-7B-v0.1) keep only their last
  ``sliding_window`` tokens;
* linear-attention layers (the Gated DeltaNet layers of Qwen3-Next and Qwen3.5) keep no per-token
  cache at all, but a fixed-size recurrent state per sequence (:attr:`ModelConfig.linear_state`),
  whose recurrent part may be kept wider than the model (Qwen3.5's ``mamba_ssm_dtype``).

:meth:`ModelConfig.from_hf_config` recognises these from the config's fields and raises
:class:`UnsupportedAttention` for any layout it cannot size, rather than guess.

Example:
    >>> MODELS["DeepSeek-V3"].attention, MODELS["Qwen3-Next-80B-A3B"].full_layers
    ('MLA', 12)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["MODELS", "ModelConfig", "UnsupportedAttention"]


class UnsupportedAttention(ValueError):
    """A ``config.json`` describes attention whose cache this library cannot size."""


@dataclass(frozen=True)
class ModelConfig:
    """Where a model keeps its KV cache, and how many numbers per token each layer keeps.

    ``layers`` counts every decoder layer; ``sliding_layers`` of them keep only the last
    ``sliding_window`` tokens and ``linear_layers`` keep a fixed state of ``linear_state`` numbers
    in all (per sequence) and no per-token cache. The rest, :attr:`full_layers`, keep every token.
    Of the fixed state, ``linear_conv_state`` numbers are the convolution windows, kept in the
    model's dtype; the recurrent part is kept in ``state_dtype`` when the config names one (its
    ``mamba_ssm_dtype``: ``"fp32"`` for Qwen3.5), else in the model's dtype too.

    Example:
        >>> MODELS["Qwen2.5-7B-Instruct"].attention, MODELS["GPT-2 small"].attention
        ('GQA', 'MHA')
    """

    name: str
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    max_context: int
    params_b: float | None = None
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    sliding_window: int = 0
    sliding_layers: int = 0
    linear_layers: int = 0
    linear_state: int = 0
    linear_conv_state: int = 0
    state_dtype: str = ""

    @property
    def attention(self) -> str:
        """ "MLA", "MHA", "GQA" or "MQA"."""
        if self.kv_lora_rank:
            return "MLA"
        if self.kv_heads == self.heads:
            return "MHA"
        return "MQA" if self.kv_heads == 1 else "GQA"

    @property
    def full_layers(self) -> int:
        """Layers whose cache grows with every token of the context."""
        return self.layers - self.sliding_layers - self.linear_layers

    @property
    def numbers_per_token_per_layer(self) -> int:
        """Numbers one attention layer caches per token: K and V per kv head, or MLA's latent."""
        if self.kv_lora_rank:
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.kv_heads * self.head_dim

    def layout(self) -> str:
        """One line that says which layers keep what.

        Example:
            >>> print(MODELS["gpt-oss-120b"].layout())
            36 layers: 18 full attention, 18 sliding-window (last 128 tokens)
        """
        parts = [f"{self.full_layers} full attention"]
        if self.sliding_layers:
            parts.append(
                f"{self.sliding_layers} sliding-window (last {self.sliding_window} tokens)"
            )
        if self.linear_layers:
            parts.append(
                f"{self.linear_layers} linear attention (a fixed state, "
                f"{self.linear_state:,} numbers per sequence, no per-token cache)"
            )
        return f"{self.layers} layers: " + ", ".join(parts)

    @classmethod
    def from_hf_config(cls, config: Mapping[str, object], name: str = "") -> ModelConfig:
        """The layout from a ``config.json`` dict (``json.load`` it, or paste it as a dict).

        Reads ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads`` (absent:
        one kv head per query head), ``head_dim`` (absent or null: ``hidden_size //
        num_attention_heads``) and ``max_position_embeddings``; GPT-2's names work too, and a
        multimodal config's ``text_config`` is used when present. Then, as the engines do:

        * ``kv_lora_rank`` (MLA): ``kv_lora_rank + qk_rope_head_dim`` numbers per layer per token;
        * ``layer_types`` (``full_attention``, ``sliding_attention``, ``linear_attention``) or
          Qwen3-Next's ``full_attention_interval``: which layers keep what;
        * ``sliding_window`` without ``layer_types``: every layer for Mistral-style models, every
          second for Gemma 2, all but every ``sliding_window_pattern``-th for Gemma 3 (6 when the
          field is absent); ignored when ``use_sliding_window`` is false;
        * ``mamba_ssm_dtype`` (Qwen3.5: ``"float32"``): the dtype vLLM keeps the linear layers'
          recurrent state in, whatever the model's dtype.

        Anything else that changes the cache (other layer types, Mamba or convolution layers,
        cross-layer KV sharing, a sparse-attention indexer, chunked attention, Kimi Linear's
        ``linear_attn_config``) raises :class:`UnsupportedAttention` naming the field.

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
        _refuse_unsizable(c)
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
        extra: dict[str, int | str] = {}
        if c.get("kv_lora_rank") is not None:
            extra["kv_lora_rank"] = _field(c, "kv_lora_rank") or 0
            rope = _field(c, "qk_rope_head_dim")
            if rope is None:
                raise UnsupportedAttention(
                    "config.json has 'kv_lora_rank' (multi-head latent attention) but no "
                    "'qk_rope_head_dim': paste the model's whole config.json"
                )
            extra["qk_rope_head_dim"] = rope
            nope = _field(c, "qk_nope_head_dim")
            head_dim = rope + nope if nope else head_dim  # the query and key width
        extra.update(_layer_kinds(c, layers, context))
        return cls(label, layers, heads, kv_heads, head_dim, context, **extra)


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


#: Fields that mean a cache this library does not model, with what they are.
_UNSIZABLE = {
    "num_kv_shared_layers": "cross-layer KV sharing (Gemma 3n)",
    "index_topk": "DeepSeek sparse attention, whose indexer keeps a cache of its own",
    "attention_chunk_size": "chunked attention (Llama 4)",
    "hybrid_override_pattern": "Mamba and attention layers (Nemotron-H)",
    "attn_layer_period": "Mamba and attention layers (Jamba)",
    "mamba_d_state": "Mamba layers",
    "ssm_cfg": "Mamba layers",
    "layers_block_type": "Mamba and attention layers (Zamba)",
    "attn_type_list": "linear and softmax attention layers (MiniMax)",
    "linear_attn_config": (
        "Kimi Delta Attention layers beside the MLA layers (Kimi Linear): only the layers it lists "
        "as full_attn_layers keep a per-token cache, and the others keep a fixed state"
    ),
}
#: ``mamba_ssm_dtype`` values in a config, in this library's dtype names.
_STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
#: Model types whose layers keep a recurrent state instead of a KV cache.
_RECURRENT_MODEL_TYPES = ("mamba", "rwkv", "xlstm")
_MODEL_TYPES_SLIDING_EVERYWHERE = {"mistral", "mixtral", "starcoder2", "phi3"}
_KNOWN_LAYER_TYPES = ("full_attention", "sliding_attention", "linear_attention")


def _refuse_unsizable(c: Mapping[str, object]) -> None:
    kind = str(c.get("model_type") or "")
    if any(word in kind for word in _RECURRENT_MODEL_TYPES):
        raise UnsupportedAttention(
            f"model_type {kind!r} keeps a recurrent state, not a KV cache: from_hf_config does not "
            "size it"
        )
    for key, what in _UNSIZABLE.items():
        if c.get(key) is not None:
            raise UnsupportedAttention(
                f"config.json field {key!r} means {what}: from_hf_config cannot size that cache, "
                "so it does not guess. Size it from the model's paper or its engine's start-up log."
            )


def _layer_kinds(c: Mapping[str, object], layers: int, context: int) -> dict[str, int | str]:
    """Sliding and linear layer counts (and the window and linear state) from the config."""
    types = c.get("layer_types")
    window = c.get("sliding_window")
    if c.get("use_sliding_window") is False or (
        isinstance(window, int) and context and window >= context
    ):
        window = None
    if types is None and c.get("full_attention_interval") is not None:
        every = _field(c, "full_attention_interval") or 1
        types = [
            "full_attention" if (i + 1) % every == 0 else "linear_attention" for i in range(layers)
        ]
    if types is None and window is not None:
        types = _sliding_pattern(c, layers)
    if types is None:
        return {}
    if not isinstance(types, Sequence) or isinstance(types, str) or len(types) != layers:
        raise ValueError(
            f"config.json 'layer_types' must list one type for each of {layers} layers"
        )
    unknown = sorted({str(t) for t in types} - set(_KNOWN_LAYER_TYPES))
    if unknown:
        raise UnsupportedAttention(
            f"config.json 'layer_types' has {', '.join(map(repr, unknown))}: from_hf_config can "
            f"size {', '.join(_KNOWN_LAYER_TYPES)} only, so it does not guess"
        )
    out: dict[str, int | str] = {"sliding_layers": list(types).count("sliding_attention")}
    if out["sliding_layers"]:
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError("config.json has sliding_attention layers but no 'sliding_window'")
        out["sliding_window"] = window
    linear = list(types).count("linear_attention")
    if linear:
        recurrent, conv = _delta_net_state(c)
        out["linear_layers"] = linear
        out["linear_state"] = linear * (recurrent + conv)
        out["linear_conv_state"] = linear * conv
        out["state_dtype"] = _state_dtype(c)
    return out


def _state_dtype(c: Mapping[str, object]) -> str:
    """The recurrent state's dtype from ``mamba_ssm_dtype``, or "" for the model's own."""
    value = c.get("mamba_ssm_dtype")
    if value is None:
        return ""
    if value not in _STATE_DTYPES:
        raise ValueError(
            f"config.json field 'mamba_ssm_dtype' is {value!r}; known: {', '.join(_STATE_DTYPES)}"
        )
    return _STATE_DTYPES[str(value)]


def _sliding_pattern(c: Mapping[str, object], layers: int) -> list[str]:
    kind = str(c.get("model_type") or "")
    if kind in _MODEL_TYPES_SLIDING_EVERYWHERE:
        return ["sliding_attention"] * layers
    if kind == "gemma2":
        every = 2
    elif kind in ("gemma3", "gemma3_text"):
        every = _field(c, "sliding_window_pattern") or 6
    else:
        raise UnsupportedAttention(
            f"config.json has 'sliding_window' but no 'layer_types', and model_type {kind!r} does "
            "not say which layers slide: add the model's 'layer_types' list to the dict"
        )
    return [
        "full_attention" if (i + 1) % every == 0 else "sliding_attention" for i in range(layers)
    ]


def _delta_net_state(c: Mapping[str, object]) -> tuple[int, int]:
    """Numbers a Gated DeltaNet layer keeps per sequence: its recurrent state and conv window."""
    keys = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim")
    fields = [_field(c, k) for k in (*keys, "linear_value_head_dim", "linear_conv_kernel_dim")]
    if any(f is None for f in fields):
        raise UnsupportedAttention(
            "config.json has linear-attention layers without the Gated DeltaNet fields "
            f"({', '.join(keys)}, linear_value_head_dim, linear_conv_kernel_dim): from_hf_config "
            "cannot size their state"
        )
    k_heads, v_heads, k_dim, v_dim, kernel = (int(f or 0) for f in fields)
    recurrent = v_heads * k_dim * v_dim
    conv = (2 * k_heads * k_dim + v_heads * v_dim) * (kernel - 1)
    return recurrent, conv


#: Published configs. Classic attention: ``num_hidden_layers``, ``num_attention_heads``,
#: ``num_key_value_heads``, ``head_dim`` (or ``hidden_size / num_attention_heads``),
#: ``max_position_embeddings`` from each model's ``config.json`` on the Hugging Face Hub.
#: Llama-3.1-8B has Llama-3-8B's shapes with a 128k context; Qwen2.5-7B-Instruct's config says
#: 32,768 (the base model's says 131,072); Mistral-7B-v0.3 has no sliding window (v0.1 had 4,096).
MODELS: dict[str, ModelConfig] = {
    m.name: m
    for m in (
        ModelConfig("GPT-2 small", 12, 12, 12, 64, 1024, 0.124),
        ModelConfig("Llama-2-7B", 32, 32, 32, 128, 4096, 6.7),
        ModelConfig("Llama-3-8B", 32, 32, 8, 128, 8192, 8.0),
        ModelConfig("Llama-3.1-8B", 32, 32, 8, 128, 131072, 8.0),
        ModelConfig("Mistral-7B-v0.3", 32, 32, 8, 128, 32768, 7.2),
        ModelConfig("Qwen2.5-7B-Instruct", 28, 28, 4, 128, 32768, 7.6),
        ModelConfig("Llama-3-70B", 80, 64, 8, 128, 8192, 70.6),
        # deepseek-ai/DeepSeek-V3 config.json: 61 layers, 128 heads, kv_lora_rank 512,
        # qk_rope_head_dim 64, max_position_embeddings 163840. MLA caches 512 + 64 numbers per
        # layer (vLLM vllm/attention/backends/mla/common.py: one latent vector per token).
        ModelConfig(
            "DeepSeek-V3", 61, 128, 128, 192, 163840, 671.0, kv_lora_rank=512, qk_rope_head_dim=64
        ),
        # Qwen/Qwen3-Next-80B-A3B-Instruct config.json: 48 layers, full_attention_interval 4,
        # 16 heads, 2 kv heads, head_dim 256, max_position_embeddings 262144; Gated DeltaNet
        # layers with 16 key heads, 32 value heads of 128 and a conv kernel of 4.
        ModelConfig(
            "Qwen3-Next-80B-A3B",
            48,
            16,
            2,
            256,
            262144,
            80.0,
            linear_layers=36,
            linear_state=36 * (32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * 3),
            linear_conv_state=36 * (2 * 16 * 128 + 32 * 128) * 3,
        ),
        # openai/gpt-oss-120b config.json: 36 layers alternating sliding_attention and
        # full_attention, sliding_window 128, 64 heads, 8 kv heads, head_dim 64,
        # max_position_embeddings 131072.
        ModelConfig(
            "gpt-oss-120b", 36, 64, 8, 64, 131072, 117.0, sliding_window=128, sliding_layers=18
        ),
    )
}
