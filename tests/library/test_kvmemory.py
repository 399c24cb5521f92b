"""The KV-cache calculator on real published configs, fp8 caches, and vLLM's budget arithmetic."""

from __future__ import annotations

import pytest

from promptdojo.kvmemory import (
    GB,
    GIB,
    MODELS,
    VLLM_GPU_MEMORY_UTILIZATION,
    CapacityError,
    ModelConfig,
    kv_blocks_that_fit,
    kv_bytes_per_token,
    kv_cache_budget,
    sessions_that_fit,
)

# The attention fields of published config.json files (values as on each model's page).
# Each sets head_dim explicitly, and hidden_size / num_attention_heads gives a different number.
GEMMA_2_9B = {
    "model_type": "gemma2",
    "hidden_size": 3584,
    "num_hidden_layers": 42,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 256,
    "intermediate_size": 14336,
    "max_position_embeddings": 8192,
    "sliding_window": 4096,
    "vocab_size": 256000,
}
MISTRAL_NEMO_2407 = {
    "model_type": "mistral",
    "hidden_size": 5120,
    "num_hidden_layers": 40,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 14336,
    "max_position_embeddings": 1024000,
    "vocab_size": 131072,
}
QWEN3_0_6B = {
    "model_type": "qwen3",
    "hidden_size": 1024,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 3072,
    "max_position_embeddings": 40960,
    "vocab_size": 151936,
}
QWEN3_4B = {
    "model_type": "qwen3",
    "hidden_size": 2560,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "intermediate_size": 9728,
    "max_position_embeddings": 40960,
    "vocab_size": 151936,
}

REAL = {
    # name: (config, layers, kv heads, head_dim, naive head_dim, KiB per token in fp16)
    # Gemma 2 alternates sliding and global layers: only the 21 global ones grow with the context.
    "Gemma-2-9B": (GEMMA_2_9B, 21, 8, 256, 224, 168),
    "Mistral-NeMo-12B": (MISTRAL_NEMO_2407, 40, 8, 128, 160, 160),
    "Qwen3-0.6B": (QWEN3_0_6B, 28, 8, 128, 64, 112),
    "Qwen3-4B": (QWEN3_4B, 36, 8, 128, 80, 144),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_from_hf_config_honours_an_explicit_head_dim(name: str) -> None:
    config, layers, kv_heads, head_dim, naive, kib = REAL[name]
    assert config["hidden_size"] // config["num_attention_heads"] == naive != head_dim
    model = ModelConfig.from_hf_config(config, name=name)
    assert (model.full_layers, model.kv_heads, model.head_dim) == (layers, kv_heads, head_dim)
    assert model.attention == "GQA"
    assert kv_bytes_per_token(model) == 2 * layers * kv_heads * head_dim * 2 == kib * 1024
    assert kv_bytes_per_token(model, "fp8") * 2 == kv_bytes_per_token(model)


def test_from_hf_config_derives_head_dim_and_kv_heads_when_absent() -> None:
    llama31 = {
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
    }
    assert ModelConfig.from_hf_config(llama31, "Llama-3.1-8B") == MODELS["Llama-3.1-8B"].__class__(
        "Llama-3.1-8B", 32, 32, 8, 128, 131072
    )
    gpt2 = {"n_layer": 12, "n_head": 12, "n_embd": 768, "n_positions": 1024}
    model = ModelConfig.from_hf_config(gpt2)
    assert (model.kv_heads, model.head_dim, model.attention) == (12, 64, "MHA")
    nested = {"model_type": "gemma3", "text_config": {**QWEN3_4B, "head_dim": None}}
    assert ModelConfig.from_hf_config(nested).head_dim == 2560 // 32  # null head_dim: derived


def test_from_hf_config_says_what_is_missing() -> None:
    with pytest.raises(ValueError, match="no 'num_hidden_layers'"):
        ModelConfig.from_hf_config({"num_attention_heads": 8, "hidden_size": 512})
    with pytest.raises(ValueError, match="multiple of num_key_value_heads"):
        ModelConfig.from_hf_config({**QWEN3_0_6B, "num_key_value_heads": 5})
    with pytest.raises(ValueError, match="whole number"):
        ModelConfig.from_hf_config({**QWEN3_0_6B, "head_dim": "128"})


def test_budget_blocks_and_sessions_agree_with_the_arithmetic() -> None:
    budget = kv_cache_budget(80 * GIB, weights=16 * GB, utilization=0.9, overhead=2 * GIB)
    assert budget == int(80 * GIB * 0.9) - 16 * GB - 2 * GIB
    # Left out, utilization is vLLM's current default (CacheConfig in vllm/config/cache.py).
    assert VLLM_GPU_MEMORY_UTILIZATION == 0.92
    default = kv_cache_budget(80 * GIB, weights=16 * GB, overhead=2 * GIB)
    assert default == int(80 * GIB * 0.92) - 16 * GB - 2 * GIB
    llama = MODELS["Llama-3.1-8B"]
    per_session = 32_768 * 128 * 1024
    assert sessions_that_fit(llama, budget, 32_768) == budget // per_session
    assert sessions_that_fit(llama, budget, 32_768, dtype="fp8") == budget // (per_session // 2)
    assert kv_blocks_that_fit(llama, budget, 32_768) == budget // (16 * 128 * 1024)
    with pytest.raises(CapacityError, match="smaller format for the weights"):
        kv_cache_budget(24 * GB, weights=30 * GB)
    assert MODELS["Llama-3.1-8B"].max_context >= 32_768 > MODELS["Llama-3-8B"].max_context
