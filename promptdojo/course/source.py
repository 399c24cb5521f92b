"""A cell's Python read into a syntax tree, once, with every way of failing a ``SyntaxError``."""

from __future__ import annotations

import ast
import symtable
import warnings

#: The file name cells are compiled under by :func:`check_syntax`.
_CELL_FILE = "<promptdojo cell>"
# The compiler's own warnings (``x is 1``) are the kernel's to show when the cell runs, not
# validation's: validation only asks whether the code parses.
warnings.filterwarnings("ignore", category=SyntaxWarning, module=_CELL_FILE)


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


def check_syntax(code: str) -> ast.Module | None:
    """Raise :class:`SyntaxError` exactly where :func:`parse_python` would, cheaper when the
    code parses: the symbol table is built from the parser's own tree, with no tree of Python
    objects (nor the garbage that sets off the cycle collector, which costs most in a process
    holding many lessons), and no bytecode (a fifth of ``compile()``'s time). Code the symbol
    table refuses (it refuses more than the parser does: ``nonlocal`` outside a function) gets
    the parser's own verdict, and its tree if it parses."""
    try:
        symtable.symtable(code, _CELL_FILE, "exec")
    except Exception:  # whatever it was, the parser says what it says
        return parse_python(code)
    return None


#: Nodes that hold statements: a statement itself, an ``except`` clause, a ``match`` case.
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def statements(tree: ast.AST) -> list[ast.AST]:
    """The statements of ``tree`` (and its ``except`` clauses and ``match`` cases), in the order
    :func:`ast.walk` meets them, without walking into expressions, which hold no statements:
    imports, class definitions, ``assert`` and ``raise`` are found at a fraction of the cost."""
    found: list[ast.AST] = []
    level = [tree]
    while level:
        deeper = []
        for node in level:
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, list):
                    deeper += [item for item in value if isinstance(item, _HOLDERS)]
        found += deeper
        level = deeper
    return found
