"""Train promptdojo's tiny language model and write it next to ``promptdojo/tinylm/model.py``.

The corpus is the docstrings of the Python standard library that runs this script, so anyone with
the same Python can rebuild it. Modules are split into training and held-out sets by a hash of their
path; a slice of the held-out text ships as ``heldout.txt`` for perplexity in lessons.

The PyTorch model mirrors the numpy one exactly (RMSNorm, rotate-half RoPE, grouped-query
attention, SwiGLU, tied embeddings). The script checks that: it evaluates held-out perplexity in
both and stores the PyTorch figure in the weights file, where a test compares it with numpy's.

The weights ship in float16 (half the bytes every page downloads); the model *is* those rounded
weights, so the PyTorch perplexity stored beside them is measured after the rounding.

Run it with PyTorch and safetensors installed (``pip install torch==2.13.0 safetensors==0.8.0``),
from the repository root:

    python scripts/train_tinylm.py --steps 3000
    python scripts/train_tinylm.py --from-shipped   # no training: re-store the shipped weights
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import sys
import sysconfig
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.numpy import save_file
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from promptdojo.tinylm.model import HELDOUT, WEIGHTS, Config, TinyLM  # noqa: E402
from promptdojo.tinylm.safetensors import read_safetensors  # noqa: E402
from promptdojo.tinylm.tokenizer import CharTokenizer  # noqa: E402

#: How the weights are stored: every page downloads them, and float16 halves the bytes.
SHIPPED_DTYPE = torch.float16
SKIP_DIRS = {"test", "tests", "idlelib", "lib2to3", "site-packages", "ensurepip", "turtledemo"}


def docstrings(path: Path) -> list[str]:
    """Module, class and function docstrings of one source file, in source order."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return []
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = [
        ast.get_docstring(node, clean=True) for node in ast.walk(tree) if isinstance(node, kinds)
    ]
    return [d for d in found if d and len(d) > 40]


def corpus(heldout_every: int = 20) -> tuple[str, str]:
    """(training text, held-out text) from the standard library's docstrings."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    train, heldout = [], []
    for path in sorted(stdlib.rglob("*.py")):
        rel = path.relative_to(stdlib)
        if SKIP_DIRS & set(rel.parts):
            continue
        bucket = int(hashlib.sha1(rel.as_posix().encode()).hexdigest(), 16) % heldout_every
        (heldout if bucket == 0 else train).extend(docstrings(path))
    return "\n\n".join(train), "\n\n".join(heldout)


class RMSNorm(nn.Module):
    def __init__(self, d: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope(x: torch.Tensor, theta: float) -> torch.Tensor:
    """Rotate-half RoPE on ``(batch, heads, T, head_dim)``, positions 0..T-1."""
    t, hd = x.shape[-2], x.shape[-1]
    half = hd // 2
    inv_freq = 1.0 / theta ** (torch.arange(0, half, dtype=torch.float64) * 2 / hd)
    angles = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq[None, :]
    emb = torch.cat([angles, angles], dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


class Block(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.c = c
        hd = c.head_dim
        self.attn_norm = RMSNorm(c.d_model, c.norm_eps)
        self.wq = nn.Linear(c.d_model, c.n_heads * hd, bias=False)
        self.wk = nn.Linear(c.d_model, c.n_kv_heads * hd, bias=False)
        self.wv = nn.Linear(c.d_model, c.n_kv_heads * hd, bias=False)
        self.wo = nn.Linear(c.n_heads * hd, c.d_model, bias=False)
        self.mlp_norm = RMSNorm(c.d_model, c.norm_eps)
        self.w1 = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.w3 = nn.Linear(c.d_model, c.d_ff, bias=False)
        self.w2 = nn.Linear(c.d_ff, c.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c, (b, t, _) = self.c, x.shape
        hd = c.head_dim
        h = self.attn_norm(x)
        q = self.wq(h).view(b, t, c.n_heads, hd).transpose(1, 2)
        k = self.wk(h).view(b, t, c.n_kv_heads, hd).transpose(1, 2)
        v = self.wv(h).view(b, t, c.n_kv_heads, hd).transpose(1, 2)
        q, k = rope(q, c.rope_theta), rope(k, c.rope_theta)
        group = c.n_heads // c.n_kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(y.transpose(1, 2).reshape(b, t, c.d_model))
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Model(nn.Module):
    def __init__(self, c: Config) -> None:
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.final_norm = RMSNorm(c.d_model, c.norm_eps)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.final_norm(x) @ self.embed.weight.T

    def export(self) -> dict[str, np.ndarray]:
        """Weights in the numpy model's layout: projections as (in, out) for ``x @ w``."""
        out = {"embed": self.embed.weight, "final_norm": self.final_norm.weight}
        for i, layer in enumerate(self.layers):
            p = f"layers.{i}."
            out[p + "attn_norm"] = layer.attn_norm.weight
            out[p + "mlp_norm"] = layer.mlp_norm.weight
            for name in ("wq", "wk", "wv", "wo", "w1", "w3", "w2"):
                out[p + name] = getattr(layer, name).weight.T
        return {k: v.detach().to(SHIPPED_DTYPE).numpy().copy() for k, v in out.items()}

    @torch.no_grad()
    def load(self, weights: dict[str, np.ndarray]) -> None:
        """Take ``weights`` (the numpy layout, any float dtype): the inverse of :meth:`export`."""

        def put(param: torch.Tensor, value: np.ndarray, transpose: bool = False) -> None:
            tensor = torch.from_numpy(np.asarray(value, dtype=np.float32))
            param.copy_(tensor.T if transpose else tensor)

        put(self.embed.weight, weights["embed"])
        put(self.final_norm.weight, weights["final_norm"])
        for i, layer in enumerate(self.layers):
            p = f"layers.{i}."
            put(layer.attn_norm.weight, weights[p + "attn_norm"])
            put(layer.mlp_norm.weight, weights[p + "mlp_norm"])
            for name in ("wq", "wk", "wv", "wo", "w1", "w3", "w2"):
                put(getattr(layer, name).weight, weights[p + name], transpose=True)


@torch.no_grad()
def torch_perplexity(model: Model, ids: np.ndarray, window: int) -> float:
    total, count = 0.0, 0
    for start in range(0, ids.size - 1, window):
        chunk = torch.from_numpy(ids[start : start + window + 1])
        if chunk.numel() < 2:
            break
        logits = model(chunk[None, :-1]).double()[0]
        total += F.cross_entropy(logits, chunk[1:], reduction="sum").item()
        count += chunk.numel() - 1
    return math.exp(total / count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--heldout-chars", type=int, default=16384)
    parser.add_argument(
        "--from-shipped",
        action="store_true",
        help="no training: store the shipped weights again in the shipped dtype",
    )
    args = parser.parse_args()
    if args.from_shipped:
        reship()
        return

    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    tokenizer = CharTokenizer()
    config = Config(
        vocab_size=len(tokenizer),
        d_model=96,
        n_layers=4,
        n_heads=4,
        n_kv_heads=2,
        d_ff=256,
        context=128,
    )
    train_text, heldout_text = corpus()
    heldout_text = tokenizer.normalize(heldout_text)[: args.heldout_chars]
    data = torch.from_numpy(tokenizer.encode(train_text))
    heldout_ids = tokenizer.encode(heldout_text)
    print(f"corpus: {data.numel():,} training characters, {heldout_ids.size:,} held out")

    model = Model(config)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params:,} parameters")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    generator = torch.Generator().manual_seed(args.seed)
    warmup = max(1, args.steps // 20)
    started = time.monotonic()
    for step in range(1, args.steps + 1):
        lr = args.lr * min(step / warmup, 0.5 * (1 + math.cos(math.pi * step / args.steps)))
        for group in optimizer.param_groups:
            group["lr"] = lr
        starts = torch.randint(
            0, data.numel() - config.context - 1, (args.batch,), generator=generator
        )
        batch = torch.stack([data[s : s + config.context + 1] for s in starts.tolist()])
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, config.vocab_size), batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 200 == 0 or step == args.steps:
            elapsed = time.monotonic() - started
            print(
                f"step {step:5d}  loss {loss.item():.3f}  lr {lr:.2e}  {elapsed:6.0f}s", flush=True
            )

    model.eval()
    HELDOUT.write_text(heldout_text, encoding="utf-8")
    meta = {
        "corpus": f"docstrings of the Python {sys.version.split()[0]} standard library",
        "training_characters": int(data.numel()),
        "steps": args.steps,
        "batch": args.batch,
        "seed": args.seed,
    }
    ship(model, meta, heldout_ids)


def ship(model: Model, meta: dict, heldout_ids: np.ndarray) -> None:
    """Store ``model``'s weights as shipped (float16) with ``meta``, after checking that numpy and
    PyTorch agree on the held-out perplexity of exactly those weights."""
    weights = model.export()
    model.load(weights)  # the rounded weights are the model; measure that one
    torch_ppl = torch_perplexity(model, heldout_ids, model.c.context)
    as_float32 = {k: v.astype(np.float32) for k, v in weights.items()}
    numpy_ppl = TinyLM(model.c, as_float32).perplexity()
    meta = dict(
        meta,
        torch_version=torch.__version__,
        torch_heldout_ppl=torch_ppl,
        weights_dtype=str(np.dtype(weights["embed"].dtype)),
    )
    save_file(weights, WEIGHTS, metadata={"meta": json.dumps(dict(meta, config=asdict(model.c)))})
    print(json.dumps(meta, indent=2))
    print(f"held-out perplexity: torch {torch_ppl:.4f}, numpy {numpy_ppl:.4f}")
    print(f"wrote {WEIGHTS} ({WEIGHTS.stat().st_size:,} bytes)")


def reship() -> None:
    """``--from-shipped``: store the shipped weights again as :data:`SHIPPED_DTYPE`; no training."""
    metadata, weights = read_safetensors(WEIGHTS)
    meta = json.loads(metadata["meta"])
    config = Config(**meta.pop("config"))
    model = Model(config)
    model.load(weights)
    model.eval()
    heldout_ids = CharTokenizer().encode(HELDOUT.read_text(encoding="utf-8"))
    ship(model, meta, heldout_ids)


if __name__ == "__main__":
    main()
