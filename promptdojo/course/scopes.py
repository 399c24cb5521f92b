"""Python's scopes as :mod:`promptdojo.course.needs` reads them: which names a function or a
comprehension binds for itself, so that they are never taken for the cells' names.

Example:
    >>> import ast
    >>> node = ast.parse("def f(x, k=k): y = x + k").body[0]
    >>> sorted(scope_of(node)[0])  # k stays the cells' name: its default is read outside
    ['x', 'y']
"""

from __future__ import annotations

import ast

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: A scope's own names, by the prefix they get there: ``show@3:0.name`` is ``name`` inside the
#: function ``show`` defined at line 3, never the cells' ``name``.
Frames = tuple[tuple[str, frozenset[str], frozenset[str]], ...]


def loaded(nodes: list[ast.AST | None]) -> set[str]:
    """The names read anywhere in ``nodes``."""
    found = (n for node in nodes if node is not None for n in ast.walk(node))
    return {n.id for n in found if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def parameters(args: ast.arguments) -> list[ast.arg]:
    """Every parameter of a function, ``*args`` and ``**kwargs`` included."""
    return [
        p for p in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if p
    ]


def header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST | None]:
    """The parts of a function Python evaluates where it is defined, not when it runs:
    decorators, default values and annotations."""
    a = node.args
    return [
        *getattr(node, "decorator_list", ()),
        *a.defaults,
        *a.kw_defaults,
        *(p.annotation for p in parameters(a)),
        getattr(node, "returns", None),
    ]


def scope_of(node: ast.AST) -> tuple[frozenset[str], frozenset[str]] | None:
    """The names local to the scope ``node`` opens, and those it declares ``global``; None when
    it opens none. A function's locals are its parameters and what its body binds (``global``
    and ``nonlocal`` names aside), a comprehension's its loop targets. A local name that the
    enclosing scope also reads where the scope is made (``lambda k=k: k``, ``[x for x in x]``)
    stays the cells' name: the reading may then find more, never less."""
    if isinstance(node, COMPREHENSIONS):
        targets = (n for g in node.generators for n in ast.walk(g.target))
        found = {n.id for n in targets if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return frozenset(found - loaded([node.generators[0].iter])), frozenset()
    if not isinstance(node, FUNCTIONS):
        return None
    found = {p.arg for p in parameters(node.args)}
    declared: set[str] = set()
    globals_: set[str] = set()
    pending: list[ast.AST] = list(node.body if isinstance(node.body, list) else [node.body])
    while pending:
        inner = pending.pop()
        if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Load):
            found.add(inner.id)
        elif isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(inner.name)
            continue
        elif isinstance(inner, ast.Import | ast.ImportFrom):
            found |= {(alias.asname or alias.name).split(".")[0] for alias in inner.names}
        elif isinstance(inner, ast.Global | ast.Nonlocal):
            declared |= set(inner.names)
            globals_ |= set(inner.names) if isinstance(inner, ast.Global) else set()
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            found.add(inner.name)
        elif (captured := bound_by_pattern(inner)) is not None:
            found.add(captured)
        if not isinstance(inner, (ast.Lambda, *COMPREHENSIONS)):
            pending += ast.iter_child_nodes(inner)
    return frozenset(found - declared - loaded(header(node))), frozenset(globals_)


def resolved(name: str, frames: Frames) -> str:
    """``name`` as the innermost scope that binds it knows it (prefixed), or as a cell's name
    (also when a scope on the way declares it ``global``)."""
    for prefix, names, globals_ in reversed(frames):
        if name in globals_:
            return name
        if name in names:
            return prefix + name
    return name


def bound_by_pattern(node: ast.AST) -> str | None:
    """The name a ``match`` pattern binds (``case Point(x=px)``, ``case [*rest]``, ``case
    {**rest}``), or None."""
    if isinstance(node, ast.MatchAs | ast.MatchStar):
        return node.name
    return node.rest if isinstance(node, ast.MatchMapping) else None
