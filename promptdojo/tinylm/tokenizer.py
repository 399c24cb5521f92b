"""A character tokenizer over printable ASCII: small, fixed and the same everywhere."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Newline, then printable ASCII from space to tilde: 96 tokens. ``?`` stands in for anything else.
VOCAB = "\n" + "".join(chr(c) for c in range(32, 127))
UNKNOWN = "?"


class CharTokenizer:
    """Maps characters to token ids and back; tabs become four spaces.

    Example:
        >>> tok = CharTokenizer()
        >>> tok.decode(tok.encode("def f():\\tpass"))
        'def f():    pass'
    """

    def __init__(self, vocab: str = VOCAB) -> None:
        if len(set(vocab)) != len(vocab) or UNKNOWN not in vocab:
            raise ValueError("vocab must hold distinct characters, including '?'")
        self.vocab = vocab
        self._ids = {ch: i for i, ch in enumerate(vocab)}
        self._unknown = self._ids[UNKNOWN]
        # Token id by code point, so encoding is one array lookup instead of a loop over characters.
        self._table = np.full(max(map(ord, vocab)) + 1, self._unknown, dtype=np.int64)
        self._table[[ord(ch) for ch in vocab]] = np.arange(len(vocab))

    def __len__(self) -> int:
        return len(self.vocab)

    def normalize(self, text: str) -> str:
        """The text as the model sees it: tabs expanded, unknown characters as ``?``."""
        text = text.replace("\t", "    ")
        return "".join(ch if ch in self._ids else UNKNOWN for ch in text)

    def encode(self, text: str) -> np.ndarray:
        """Token ids of ``text``."""
        raw = text.replace("\t", "    ").encode("utf-32-le", errors="surrogatepass")
        codes = np.frombuffer(raw, dtype="<u4")
        known = codes < self._table.size
        return np.where(known, self._table[np.where(known, codes, 0)], self._unknown)

    def decode(self, tokens: Sequence[int] | np.ndarray) -> str:
        """Text of token ids."""
        return "".join(self.vocab[int(t)] for t in tokens)
