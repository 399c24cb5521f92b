"""The names a cell reads before it binds them: all it can take from the cells above.

A name the cell binds on every way to a read of it is the cell's own there: ``s`` in ``for n, c, s
in zip(sizes, cont, stat): print(s)``, or in ``s = fresh(); s.run()``, never holds what a cell
above left in it. :mod:`promptdojo.course.needs` asks the cells above only for the rest. The
reading keeps to what is sure: a name counts as bound after an ``if`` only when both branches bind
it, never after a loop, a ``try``, a ``with`` or a ``match`` (their bodies may not run to the end),
and a function's body reads a cell's name when it is called, which may be anywhere: it counts
unless the name was bound before the ``def``. An ``import`` binds nothing of the cell's own (the
module is every cell's), and a name some function may rebind (``global x`` in its body) is never
the cell's own: :mod:`promptdojo.course.needs` adds those back.

Example:
    >>> import ast
    >>> sorted(entry_reads(ast.parse("x = f(y)\\nprint(x)\\nfor i in x: z = i + w")))
    ['f', 'print', 'w', 'y']
"""

from __future__ import annotations

import ast

from promptdojo.course.scopes import Frames, resolved, scope_of


def entry_reads(tree: ast.Module) -> set[str]:
    """The cells' names ``tree`` may read before binding them (``del x`` reads ``x`` too)."""
    found: set[str] = set()
    _block(tree.body, set(), found)
    return found


def _block(body: list[ast.stmt], bound: set[str], found: set[str]) -> set[str]:
    """Read ``body`` in order from the names ``bound`` before it; those bound after it."""
    for statement in body:
        bound = _statement(statement, bound, found)
    return bound


def _statement(node: ast.stmt, bound: set[str], found: set[str]) -> set[str]:
    if isinstance(node, ast.If):
        _loads(node.test, bound, found)
        return _block(node.body, set(bound), found) & _block(node.orelse, set(bound), found)
    # A loop, a ``try`` or a ``match`` binds nothing for sure after it; a name deleted anywhere
    # in one may be unbound at any point of it.
    start = bound - _deleted(node)
    if isinstance(node, ast.For | ast.AsyncFor):
        _loads(node.iter, bound, found)
        inside = start | _targets(node.target)
        _loads(node.target, inside, found)  # ``for a.x in ...`` reads ``a``
        _block(node.body, set(inside), found)
        _block(node.orelse, set(start), found)
        return start
    if isinstance(node, ast.While):
        _loads(node.test, start, found)
        _block(node.body, set(start), found)
        _block(node.orelse, set(start), found)
        return start
    if isinstance(node, ast.With | ast.AsyncWith):
        inside = set(bound)
        for item in node.items:
            _loads(item.context_expr, inside, found)
            if item.optional_vars is not None:
                inside |= _targets(item.optional_vars)
                _loads(item.optional_vars, inside, found)
        _block(node.body, set(inside), found)
        # A context manager may swallow what failed in its body, or in binding a target
        # (``with suppress(TypeError) as (a, b)``): nothing is bound for sure after it.
        return start
    if isinstance(node, ast.Try | getattr(ast, "TryStar", ast.Try)):
        _block(node.body, set(start), found)
        for handler in node.handlers:
            _loads(handler.type, start, found)
            _block(handler.body, start | ({handler.name} if handler.name else set()), found)
        _block(node.orelse, set(start), found)
        _block(node.finalbody, set(start), found)
        return start
    if isinstance(node, ast.Match):
        _loads(node.subject, bound, found)
        for case in node.cases:
            captured = _captured(case.pattern)
            _loads(case.pattern, start, found)  # value patterns read names: ``case Color.RED``
            _loads(case.guard, start | captured, found)
            _block(case.body, start | captured, found)
        return start
    _loads(node, bound, found)  # a simple statement, a ``def`` or a ``class``: reads, then binds
    if isinstance(node, ast.Delete):
        return bound - _deleted(node)
    return bound | _binds(node)


def _loads(node: ast.AST | None, bound: set[str], found: set[str]) -> None:
    """Add the cells' names ``node`` reads (in any scope it opens) that are not ``bound``."""
    pending: list[tuple[ast.AST, Frames]] = [(node, ())] if node is not None else []
    while pending:
        node, frames = pending.pop()
        read = None
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            read = node.id  # a load, or a ``del``: both need the name bound
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            read = node.target.id  # ``x += 1`` reads ``x``
        if read is not None and "@" not in (name := resolved(read, frames)) and name not in bound:
            found.add(name)
        scope = scope_of(node)
        if scope is not None:
            label = getattr(node, "name", type(node).__name__.lower())
            frames = (*frames, (f"{label}@{node.lineno}:{node.col_offset}.", *scope))
        pending += [(child, frames) for child in ast.iter_child_nodes(node)]


def _targets(node: ast.AST) -> set[str]:
    """The names an assignment target binds: ``a`` and ``b`` of ``a, *b = ...``, none of
    ``a.x`` or ``a[0]``."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Tuple | ast.List):
        return set().union(*(_targets(e) for e in node.elts))
    return _targets(node.value) if isinstance(node, ast.Starred) else set()


def _binds(node: ast.stmt) -> set[str]:
    """The names a simple statement, a ``def`` or a ``class`` binds for sure to a value of the
    cell's own. Not an ``import``: a module is one object for every cell (``sys.modules``), so
    ``import random`` then ``random.random()`` reads what a cell above did to it (a seed)."""
    if isinstance(node, ast.Assign):
        return set().union(*(_targets(t) for t in node.targets))
    if isinstance(node, ast.AugAssign) or (isinstance(node, ast.AnnAssign) and node.value):
        return _targets(node.target)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    return set()


def _deleted(node: ast.AST) -> set[str]:
    """The names ``del`` statements anywhere in ``node`` may unbind."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}


def _captured(pattern: ast.pattern) -> set[str]:
    """The names a ``match`` pattern binds."""
    found = set()
    for node in ast.walk(pattern):
        name = node.rest if isinstance(node, ast.MatchMapping) else getattr(node, "name", None)
        if isinstance(node, ast.MatchAs | ast.MatchStar | ast.MatchMapping) and name:
            found.add(name)
    return found
