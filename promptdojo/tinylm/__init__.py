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
