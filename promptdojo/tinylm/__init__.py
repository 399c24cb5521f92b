"""A tiny, real language model: a Llama-shaped transformer trained on Python's own docstrings.

Example:
    >>> from promptdojo.tinylm import TinyLM
    >>> model = TinyLM.load()
    >>> model.n_params > 100_000
    True
"""

from promptdojo.tinylm.model import QUANT_SCHEMES, Config, TinyLM
from promptdojo.tinylm.tokenizer import CharTokenizer

__all__ = ["QUANT_SCHEMES", "CharTokenizer", "Config", "TinyLM"]


def _kernel_warm_up() -> None:
    """Score a short text and take two cached steps, unseen (``Kernel.warm_up_modules``).

    The browser's kernel calls this before "ready" on a step whose cells import this package:
    in WebAssembly, the first forward pass compiles numpy's einsum, attention and softmax loops
    on their first call, some 250 ms that the step's first Run would otherwise pay.
    """
    model = TinyLM.load()
    model.score("def add(a, b):\n    return a + b\n", window=24)
    cache = model.new_cache()
    model.forward(model.tokenizer.encode("def "), cache)
    model.forward(model.tokenizer.encode("f"), cache)
