"""Library figures: KV-cached against recomputed decoding, and int8 quantization throughput.

    python bench/library.py

Both are ratios against a baseline measured in the same run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import best_of, save
from promptdojo.decoding import Sampler
from promptdojo.quantization import quantize_symmetric
from promptdojo.tinylm import TinyLM


def decode_seconds(model: TinyLM, tokens: int, use_cache: bool) -> float:
    start = time.perf_counter()
    model.generate("def ", tokens, sampler=Sampler(temperature=0), use_cache=use_cache)
    return time.perf_counter() - start


def main() -> None:
    model = TinyLM.load()
    figures: dict[str, object] = {}
    for tokens in (64, 256, 1024):
        cached = min(decode_seconds(model, tokens, True) for _ in range(3))
        # Recomputation at 1024 tokens takes about a minute, so it runs once; the others twice.
        uncached = min(
            decode_seconds(model, tokens, False) for _ in range(1 if tokens > 256 else 2)
        )
        figures[f"kv_speedup_{tokens}"] = round(uncached / cached, 1)
        figures[f"kv_cached_s_{tokens}"] = round(cached, 3)
        figures[f"kv_uncached_s_{tokens}"] = round(uncached, 3)
        print(f"{tokens} tokens: cached {cached:.3f} s, recomputed {uncached:.3f} s", flush=True)

    w = np.random.default_rng(0).normal(size=16 * 1024 * 1024).astype(np.float32)
    copy = best_of(lambda: np.copy(w))
    quant = best_of(lambda: quantize_symmetric(w, bits=8))
    figures["int8_vs_copy_throughput"] = round(copy / quant, 3)
    figures["copy_ms_16M"] = round(copy * 1000, 1)
    figures["int8_ms_16M"] = round(quant * 1000, 1)
    save("library", figures, "python bench/library.py")


if __name__ == "__main__":
    main()
