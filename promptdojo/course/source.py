"""A cell's Python read into a syntax tree, once, with every way of failing a ``SyntaxError``."""

from __future__ import annotations

import ast


def parse_python(code: str) -> ast.Module:
    """``ast.parse(code)``; code nested too deeply for Python's parser (ten thousand brackets,
    ``not not not ...``) raises :class:`SyntaxError` too, never MemoryError or RecursionError.

    Python's parser signals such code with a MemoryError ("too complex to parse") or a
    RecursionError, which validation would otherwise die of.
    """
    try:
        return ast.parse(code)
    except (MemoryError, RecursionError):
        raise SyntaxError(
            "the code nests too deeply for Python's parser (brackets or operators inside "
            "each other thousands of times)"
        ) from None
