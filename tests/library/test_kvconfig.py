"""KV sizes of current architectures (MLA, hybrid linear attention, sliding windows) from their
published ``config.json`` files, against sizes worked out by hand, and refusals to guess."""

from __future__ import annotations

from dataclasses import replace

import pytest

from promptdojo.kvmemory import (
    GIB,
    MODELS,
    CapacityError,
    ModelConfig,
    UnsupportedAttention,
    fixed_state_bytes,
    kv_blocks_that_fit,
    kv_bytes_per_token,
    kv_cache_bytes,
    sessions_that_fit,
)

# The cache-relevant fields of published config.json files on the Hugging Face Hub.
DEEPSEEK_V3 = {  # deepseek-ai/DeepSeek-V3
    "model_type": "deepseek_v3",
    "hidden_size": 7168,
    "num_hidden_layers": 61,
    "num_attention_heads": 128,
    "num_key_value_heads": 128,
    "kv_lora_rank": 512,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "max_position_embeddings": 163840,
}
QWEN3_NEXT = {  # Qwen/Qwen3-Next-80B-A3B-Instruct
    "model_type": "qwen3_next",
    "full_attention_interval": 4,
    "head_dim": 256,
    "hidden_size": 2048,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_value_head_dim": 128,
    "max_position_embeddings": 262144,
    "num_attention_heads": 16,
    "num_hidden_layers": 48,
    "num_key_value_heads": 2,
}
KIMI_LINEAR = {  # Kimi Linear's layout: 27 layers, MLA in 7 of them, Kimi Delta Attention in 20
    "model_type": "kimi_linear",
    "hidden_size": 2304,
    "num_hidden_layers": 27,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "kv_lora_rank": 512,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "max_position_embeddings": 1048576,
    "linear_attn_config": {
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
        "kda_layers": [i for i in range(1, 28) if i not in (4, 8, 12, 16, 20, 24, 27)],
        "head_dim": 128,
        "num_heads": 32,
        "short_conv_kernel_size": 4,
    },
}
GPT_OSS_120B = {  # openai/gpt-oss-120b
    "model_type": "gpt_oss",
    "hidden_size": 2880,
    "head_dim": 64,
    "num_hidden_layers": 36,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention"] * 18,
    "max_position_embeddings": 131072,
}
GEMMA_3_27B = {  # google/gemma-3-27b-it (its text_config)
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "hidden_size": 5376,
        "head_dim": 128,
        "num_hidden_layers": 62,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "sliding_window": 1024,
        "sliding_window_pattern": 6,
        "max_position_embeddings": 131072,
    },
}
MISTRAL_7B_V01 = {  # mistralai/Mistral-7B-v0.1: every layer slides over 4,096 tokens
    "model_type": "mistral",
    "hidden_size": 4096,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "sliding_window": 4096,
    "max_position_embeddings": 32768,
}
QWEN2_5_7B_BASE = {  # Qwen/Qwen2.5-7B: a sliding_window that use_sliding_window switches off
    "model_type": "qwen2",
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "max_position_embeddings": 131072,
}


def test_mla_caches_one_latent_per_layer() -> None:
    model = ModelConfig.from_hf_config(DEEPSEEK_V3, name="DeepSeek-V3")
    assert model.attention == "MLA"
    assert kv_bytes_per_token(model, "bf16") == 61 * (512 + 64) * 2 == 70_272  # 68.625 KiB
    naive = 2 * 61 * 128 * (7168 // 128) * 2  # the old reading: 128 kv heads of 56
    assert naive / kv_bytes_per_token(model, "bf16") > 24
    assert kv_bytes_per_token(model, "bf16") < kv_bytes_per_token(MODELS["Llama-3.1-8B"])
    assert kv_bytes_per_token(model, "fp8") == 61 * 576
    assert replace(MODELS["DeepSeek-V3"], params_b=None) == model  # the listed shape


def test_hybrid_linear_attention_caches_only_its_full_layers() -> None:
    model = ModelConfig.from_hf_config(QWEN3_NEXT, name="Qwen3-Next-80B-A3B")
    assert (model.full_layers, model.linear_layers) == (12, 36)
    assert kv_bytes_per_token(model) == 12 * 2 * 2 * 256 * 2 == 24 * 1024
    assert kv_cache_bytes(model, 262_144) == 6 * GIB
    # Each Gated DeltaNet layer: a 32 x 128 x 128 recurrent state, and a conv window of 3 steps
    # over its 2 x 16 x 128 key/query and 32 x 128 value channels.
    per_layer = 32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * 3
    assert fixed_state_bytes(model) == 36 * per_layer * 2
    assert fixed_state_bytes(model) == fixed_state_bytes(model, batch=1)  # does not grow
    assert "36 linear attention" in model.layout()
    assert replace(MODELS["Qwen3-Next-80B-A3B"], params_b=None) == model  # the listed shape
    listed = {**QWEN3_NEXT, "layer_types": (["linear_attention"] * 3 + ["full_attention"]) * 12}
    del listed["full_attention_interval"]
    assert ModelConfig.from_hf_config(listed, name="Qwen3-Next-80B-A3B") == model


def test_a_recurrent_state_kept_in_fp32_is_counted_in_fp32() -> None:
    """Qwen3.5's config asks for ``mamba_ssm_dtype: float32``: vLLM keeps the recurrent state in
    fp32 and the convolution windows in the model's bf16."""
    model = ModelConfig.from_hf_config({**QWEN3_NEXT, "mamba_ssm_dtype": "float32"})
    assert model.state_dtype == "fp32"
    recurrent, conv = 32 * 128 * 128, (2 * 16 * 128 + 32 * 128) * 3
    assert fixed_state_bytes(model) == 36 * (recurrent * 4 + conv * 2)
    assert fixed_state_bytes(model, dtype="fp16") == fixed_state_bytes(model)
    plain = ModelConfig.from_hf_config(QWEN3_NEXT)
    assert fixed_state_bytes(model) - fixed_state_bytes(plain) == 36 * recurrent * 2
    per_session = kv_cache_bytes(model, 32_768) + fixed_state_bytes(model)
    assert sessions_that_fit(model, 40 * GIB, 32_768) == 40 * GIB // per_session
    with pytest.raises(ValueError, match="'mamba_ssm_dtype' is 'float64'"):
        ModelConfig.from_hf_config({**QWEN3_NEXT, "mamba_ssm_dtype": "float64"})


def test_kimi_linear_is_refused_not_sized_as_all_mla() -> None:
    with pytest.raises(UnsupportedAttention, match=r"'linear_attn_config'.*Kimi Delta Attention"):
        ModelConfig.from_hf_config(KIMI_LINEAR)
    plain_mla = {k: v for k, v in KIMI_LINEAR.items() if k != "linear_attn_config"}
    assert kv_bytes_per_token(ModelConfig.from_hf_config(plain_mla), "bf16") == 27 * 576 * 2


def test_sliding_layers_hold_a_window() -> None:
    model = ModelConfig.from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")
    assert (model.full_layers, model.sliding_layers, model.sliding_window) == (18, 18, 128)
    per_layer_token = 2 * 8 * 64 * 2
    assert kv_bytes_per_token(model) == 18 * per_layer_token
    assert kv_cache_bytes(model, 100) == 36 * per_layer_token * 100
    assert kv_cache_bytes(model, 32_768) == per_layer_token * (18 * 32_768 + 18 * 128)
    assert replace(MODELS["gpt-oss-120b"], params_b=None) == model  # the listed shape
    gemma = ModelConfig.from_hf_config(GEMMA_3_27B, name="Gemma-3-27B")
    assert (gemma.full_layers, gemma.sliding_layers) == (10, 52)
    per = 2 * 16 * 128 * 2
    assert kv_cache_bytes(gemma, 131_072) == per * (10 * 131_072 + 52 * 1024)
    mistral = ModelConfig.from_hf_config(MISTRAL_7B_V01)
    assert (mistral.full_layers, mistral.sliding_layers) == (0, 32)
    assert kv_cache_bytes(mistral, 32_768) == kv_cache_bytes(mistral, 4096) == 512 * 1024**2
    qwen = ModelConfig.from_hf_config(QWEN2_5_7B_BASE)
    assert (qwen.full_layers, qwen.sliding_layers) == (28, 0)


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ({"num_kv_shared_layers": 15}, "cross-layer KV sharing"),
        ({"index_topk": 2048}, "indexer"),
        ({"attention_chunk_size": 8192}, "chunked attention"),
        ({"hybrid_override_pattern": "M-M*"}, "Mamba"),
        ({"layer_types": ["full_attention", "conv"] * 24}, "'conv'"),
        ({"sliding_window": 4096, "model_type": "somenewmodel"}, "layer_types"),
        ({"attn_type_list": [0, 1] * 24}, "MiniMax"),
        ({"model_type": "mamba2"}, "recurrent state"),
    ],
)
def test_attention_it_cannot_size_is_refused(extra: dict, match: str) -> None:
    config = {
        "num_hidden_layers": 48,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "max_position_embeddings": 262144,
        **extra,
    }
    with pytest.raises(UnsupportedAttention, match=match):
        ModelConfig.from_hf_config(config)


def test_mixed_layouts_are_planned_per_session() -> None:
    oss = MODELS["gpt-oss-120b"]
    with pytest.raises(UnsupportedAttention, match="sessions_that_fit"):
        kv_blocks_that_fit(oss, 40 * GIB, 32_768)
    per_session = kv_cache_bytes(oss, 32_768)
    assert sessions_that_fit(oss, 40 * GIB, 32_768) == 40 * GIB // per_session
    nxt = MODELS["Qwen3-Next-80B-A3B"]
    per_session = kv_cache_bytes(nxt, 32_768) + fixed_state_bytes(nxt)
    assert sessions_that_fit(nxt, 40 * GIB, 32_768) == 40 * GIB // per_session
    with pytest.raises(CapacityError, match="One session of 262144 tokens"):
        sessions_that_fit(nxt, GIB, 262_144)


def test_capacity_error_rounds_as_vllm_does() -> None:
    with pytest.raises(CapacityError, match=r"\(4\.0 GiB KV cache is needed.*\(2\.0 GiB\)"):
        kv_blocks_that_fit(MODELS["Llama-3.1-8B"], 2 * GIB, max_seq_len=32_768)
