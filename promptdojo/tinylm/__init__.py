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

    The browser's kernel calls this after "ready", once no cell has run for half a second, when
    the lesson imports this package. In WebAssembly, the first forward passes run numpy's
    einsum, attention and softmax loops in code compiled quickly, until the browser has compiled
    them again, optimized, in the background; running them once while the learner reads moves
    that wait off the step's first scoring (bench/NOTES.md says by how much).
    """
    model = TinyLM.load()
    model.score("def add(a, b):\n    return a + b\n", window=24)
    cache = model.new_cache()
    model.forward(model.tokenizer.encode("def "), cache)
    model.forward(model.tokenizer.encode("f"), cache)
