"""Which cells above a cell its run needs first, read from the code as the lesson wrote it.

Running a cell first runs the cells above it that have not run in this Python (``order.js``), so
that no cell fails for a name an earlier one defines. Most cells need only some of those: step 7's
``size`` multiplies two numbers, yet its first run used to score four models first. The server
reads each visible cell's names and sends, for each, the cells above that may bind or change a
name it reads, and those cells' own needs in turn. The page runs only those while the cells are
as written; once the learner edited the cell or one above it, it runs them all, as before.

The reading is conservative: a cell may change a name when it binds it (assignment, ``import``,
``def``, loop target, ``global``), stores into it (``x[k] = v``, ``x.a = v``, ``x += 1``),
calls a method on it or passes it to a call (``x.append(1)``, ``np.random.seed(0)``, ``f(x)``;
the builtins that never change their arguments, like ``print`` and ``len``, aside), or iterates
it (a generator). Names may share an object (``b = a``, ``row = grid[0]``, ``a.append(b)``,
``f(a, b)``): a change through one is a change to every name it may share with, across the
step, set-up cells included; imported names and builtins share nothing (``x = np.exp(y)`` does
not tie every array to numpy). The names a function or a comprehension binds are its own
(``show@3:0.name``), so a helper's loop variable is never a cell's name of the same spelling.
A cell that reaches names no syntax shows (``exec``, ``globals()``, ``import *``) or does not
parse needs, and may change, everything.

A lesson may name objects no call changes (lesson.yaml's ``unchanged_by_calls: [model, tok]``):
calling a method on one of those names, or passing it to a call, then changes it not, returns
nothing that shares an object with it (``model.quantized(s)`` is a new model), and links it to
nothing (``ids = tok.encode(text)``). Binding or storing into them still changes them, and
so does a change through a part of them (``model.cache.append(x)``) or through a name that an
assignment made share one (``emb = model.weights["embed"]``, then ``emb[0] = 0``). Step 4's
heatmap reads ``model``; without that, its first run would wait for ``same-tokens``, which only
calls ``model.generate``. The lesson's tests run each cell after only the cells it needs, so a
name listed wrongly shows up there.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from promptdojo.course.model import Step

#: Built-in functions that never change their arguments: passing a name to one only reads it.
_READS_ONLY = frozenset(
    (  # noqa: SIM905 (one list of words reads better than 41 lines of them)
        "abs all any ascii bin bool callable chr complex dict divmod enumerate float format "
        "frozenset hasattr hash hex id int isinstance issubclass len list max min oct ord pow "
        "print range repr reversed round set sorted str sum tuple type zip"
    ).split()
)
#: Calls that reach names no syntax shows: a cell making one may read or change any name.
_OPAQUE = frozenset({"exec", "eval", "globals", "locals", "vars", "__import__"})
_CHAINS = (ast.Attribute, ast.Subscript, ast.Call, ast.Starred)
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class Uses:
    """The names a cell may read and those it may bind or change; ``opaque`` when its syntax
    cannot tell (it then reads and changes every name)."""

    reads: frozenset[str] = frozenset()
    changes: frozenset[str] = frozenset()
    opaque: bool = False
    #: Names that may come to share an object (``b = a``, ``b = a.T``, ``a.append(b)``): a
    #: change through one is a change to the others.
    links: tuple[frozenset[str], ...] = ()
    #: Names bound by ``import``: modules and what they define, never one of the lesson's values.
    imported: frozenset[str] = frozenset()


_EVERYTHING = Uses(opaque=True)


def _receiver(node: ast.AST) -> ast.AST | None:
    """What a method is looked up on (``model`` of ``model.generate``)."""
    return node.value if isinstance(node, ast.Attribute) else None


#: Built-in functions whose result shares nothing with their arguments (numbers, text, a range):
#: changing the result, or looping over it, changes no name.
_FRESH = frozenset(
    (  # noqa: SIM905 (one list of words reads better than 26 lines of them)
        "abs ascii bin bool callable chr complex divmod float format hash hex id int isinstance "
        "issubclass len oct ord pow range repr round str"
    ).split()
)


def _root(node: ast.AST, fresh: Callable[[str], bool] = lambda name: False) -> str | None:
    """The name an attribute, subscript or call chain starts from (``a`` of ``a.b[1].c()``);
    none when it starts from what a built-in of :data:`_FRESH` returned (``for i in
    range(n)``): that result is new, so changing it changes neither the function nor its
    arguments. Any other function's result may be, or hold, what it was given or something it
    keeps (``max(rows).append(1)``): the chain then starts from the function. None too when
    it starts from a method called on a name for which ``fresh`` holds (a name of lesson.yaml's
    ``unchanged_by_calls``: ``model.quantized(s)`` is a new model)."""
    while isinstance(node, _CHAINS):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in _FRESH:
            return None
        method_of = _receiver(node.func) if isinstance(node, ast.Call) else None
        if isinstance(method_of, ast.Name) and fresh(method_of.id):
            return None
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _touched(node: ast.AST) -> list[ast.AST] | None:
    """The expressions ``node`` may change in place (None: any name, through ``exec`` and the
    like)."""
    if isinstance(node, ast.Attribute | ast.Subscript) and not isinstance(node.ctx, ast.Load):
        return [node.value]
    if isinstance(node, ast.AugAssign):
        return [node.target]
    if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        return [node.iter]
    if isinstance(node, ast.Starred):
        return [node.value]
    if not isinstance(node, ast.Call):
        return []
    arguments = [*node.args, *(k.value for k in node.keywords)]
    if not isinstance(node.func, ast.Name):
        return [node.func, *arguments]
    if node.func.id in _OPAQUE:
        return None
    return [] if node.func.id in _READS_ONLY else arguments


#: The nodes :func:`_touched` looks at; and those the walk enters (not a name's context, an
#: operator or a constant, which hold no names).
_MAY_CHANGE = frozenset(
    {ast.Attribute, ast.Subscript, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension}
    | {ast.Starred, ast.Call}
)
_WALKED = (ast.stmt, ast.expr, ast.comprehension, ast.keyword, ast.arguments, ast.arg)
_WALKED += (ast.withitem, ast.excepthandler, ast.match_case, ast.pattern, ast.alias)

#: Statements that hold others whose headers link nothing (``if a is b:``). A loop's target
#: and what it runs over, and a ``with``'s items, are linked as a simple statement's names are.
_HOLDERS = (ast.If, ast.While, ast.Try, ast.Match, ast.FunctionDef, ast.AsyncFunctionDef)
_HOLDERS += (ast.ClassDef, getattr(ast, "TryStar", ast.Try))


def _link_of(node: ast.AST, owner: set[str] | None, links: list[set[str]]) -> set[str] | None:
    """Where the names below ``node`` go to be linked: a statement starts a set of its own (the
    names a simple statement mentions may share an object: ``b = a[1:]``, ``a.append(b)``,
    ``f(a, b)``; the statements a loop holds start their own); a call of a builtin that only
    reads (``print(a, b)``) and the headers of ``if``, ``def`` and the like link nothing."""
    if not isinstance(node, ast.stmt):
        return owner
    if isinstance(node, _HOLDERS):
        return None
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and getattr(call.func, "id", None) in _READS_ONLY:
        return None
    links.append(set())
    return links[-1]


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: A scope's own names, by the prefix they get there: ``show@3:0.name`` is ``name`` inside the
#: function ``show`` defined at line 3, never the cells' ``name``.
_Frames = tuple[tuple[str, frozenset[str], frozenset[str]], ...]


def _loaded(nodes: list[ast.AST | None]) -> set[str]:
    """The names read anywhere in ``nodes``."""
    found = (n for node in nodes if node is not None for n in ast.walk(node))
    return {n.id for n in found if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _header(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.AST | None]:
    """The parts of a function Python evaluates where it is defined, not when it runs:
    decorators, default values and annotations."""
    a = node.args
    parameters = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
    return [
        *getattr(node, "decorator_list", ()),
        *a.defaults,
        *a.kw_defaults,
        *(p.annotation for p in parameters if p is not None),
        getattr(node, "returns", None),
    ]


def _scope_of(node: ast.AST) -> tuple[frozenset[str], frozenset[str]] | None:
    """The names local to the scope ``node`` opens, and those it declares ``global``; None when
    it opens none. A function's locals are its parameters and what its body binds (``global``
    and ``nonlocal`` names aside), a comprehension's its loop targets. A local name that the
    enclosing scope also reads where the scope is made (``lambda k=k: k``, ``[x for x in x]``)
    stays the cells' name: the reading may then find more, never less."""
    if isinstance(node, _COMPREHENSIONS):
        targets = (n for g in node.generators for n in ast.walk(g.target))
        found = {n.id for n in targets if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return frozenset(found - _loaded([node.generators[0].iter])), frozenset()
    if not isinstance(node, _FUNCTIONS):
        return None
    a = node.args
    found = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if p}
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
        if not isinstance(inner, (ast.Lambda, *_COMPREHENSIONS)):
            pending += ast.iter_child_nodes(inner)
    return frozenset(found - declared - _loaded(_header(node))), frozenset(globals_)


def _resolved(name: str, frames: _Frames) -> str:
    """``name`` as the innermost scope that binds it knows it (prefixed), or as a cell's name
    (also when a scope on the way declares it ``global``)."""
    for prefix, names, globals_ in reversed(frames):
        if name in globals_:
            return name
        if name in names:
            return prefix + name
    return name


def _called_on(node: ast.Call, unchanged: frozenset[str]) -> list[ast.Name]:
    """The names of ``unchanged`` that ``node`` is called on or given directly
    (``model.generate(x)``, ``f(model)``), which the call does not change; never through
    ``setattr`` or ``delattr``, which exist to change what they are given."""
    if getattr(node.func, "id", None) in ("setattr", "delattr"):
        return []
    direct = [*node.args, *(k.value for k in node.keywords)]
    if isinstance(node.func, ast.Attribute):
        direct.append(node.func.value)
    return [n for n in direct if isinstance(n, ast.Name) and n.id in unchanged]


def uses(code: str, unchanged: frozenset[str] = frozenset()) -> Uses:
    """What ``code`` may read and change, at any depth (a function it defines included), in
    one walk over its syntax tree; a call changes none of the names in ``unchanged``."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _EVERYTHING
    reads: set[str] = set()
    changes: set[str] = set()
    imported: set[str] = set()
    links: list[set[str]] = []
    kept_apart: set[int] = set()  # Name nodes a call on an unchanged name does not link
    pending: list[tuple[ast.AST, set[str] | None, _Frames]] = [(tree, None, ())]
    while pending:
        node, owner, frames = pending.pop()
        owner = _link_of(node, owner, links)
        if isinstance(node, ast.Name):
            name = _resolved(node.id, frames)
            (reads if isinstance(node.ctx, ast.Load) else changes).add(name)
            if owner is not None and id(node) not in kept_apart:
                owner.add(name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            changes.add(_resolved(node.name, frames))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return _EVERYTHING
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
            changes |= imported
        elif isinstance(node, ast.Global | ast.Nonlocal):
            changes |= set(node.names)
        if type(node) in _MAY_CHANGE:
            touched = _touched(node)
            if touched is None:
                return _EVERYTHING
            # A name changed in place is also read: the change builds on what it held.
            apart: set[int] = set()
            if isinstance(node, ast.Call) and unchanged:
                found = _called_on(node, unchanged)
                apart = {id(n) for n in found if _resolved(n.id, frames) == n.id}
                kept_apart |= apart
            # The receiver or argument a call on an unchanged name is given is left unchanged.
            kept = [t for t in touched if id(t) not in apart and id(_receiver(t)) not in apart]

            def fresh(name: str, frames: _Frames = frames) -> bool:
                return name in unchanged and _resolved(name, frames) == name

            roots = [_root(t, fresh) for t in touched]
            reads |= {_resolved(name, frames) for name in roots if name is not None}
            roots = [_root(t, fresh) for t in kept]
            changes |= {_resolved(name, frames) for name in roots if name is not None}
        scope = _scope_of(node)
        if scope is not None:
            label = getattr(node, "name", type(node).__name__.lower())
            frames = (*frames, (f"{label}@{node.lineno}:{node.col_offset}.", *scope))
        for name in node._fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                pending += [(item, owner, frames) for item in child if isinstance(item, _WALKED)]
            elif isinstance(child, _WALKED):
                pending.append((child, owner, frames))
    shared = tuple(frozenset(link) for link in links if len(link) > 1)
    return Uses(frozenset(reads), frozenset(changes), False, shared, frozenset(imported))


def _cell_codes(step: Step) -> list[tuple[str, list[str]]]:
    """Each visible cell's id with its code; an exercise's with its check's and solution's,
    which run beside the learner's answer."""
    found = []
    for cell in step.cells:
        codes = [cell.code]
        exercise = step.exercise(cell.id)
        if exercise is not None:
            codes += [exercise.check.code]
            codes += [exercise.solution.code] if exercise.solution is not None else []
        found.append((cell.id, codes))
    return found


def _merged(codes: list[str], unchanged: frozenset[str]) -> Uses:
    found = [uses(code, unchanged) for code in codes]
    if any(u.opaque for u in found):
        return _EVERYTHING
    return Uses(
        frozenset().union(*(u.reads for u in found)),
        frozenset().union(*(u.changes for u in found)),
        False,
        tuple(link for u in found for link in u.links),
        frozenset().union(*(u.imported for u in found)),
    )


class _Sharing:
    """Which of a step's names may share an object, from every link its cells make (set-up
    cells included). Imported names and builtins never do: ``x = np.exp(y)`` does not make
    every array share numpy."""

    def __init__(self, found: list[Uses]) -> None:
        imported = frozenset().union(*(u.imported for u in found))
        bound = frozenset().union(*(u.changes for u in found)) - imported
        outside = imported | (_BUILTINS - bound)
        group: dict[str, frozenset[str]] = {}
        for link in (link - outside for u in found for link in u.links):
            merged = link.union(*(group.get(name, ()) for name in link))
            for name in merged:
                group[name] = merged
        self.group = group

    def closure(self, names: set[str]) -> set[str]:
        """``names`` and every name that may share an object with one of them."""
        groups = {id(g): g for name in names if (g := self.group.get(name)) is not None}
        return set(names).union(*groups.values())


def needed_cells(step: Step, unchanged_by_calls: Iterable[str] = ()) -> dict[str, list[str]]:
    """For each visible cell of ``step``, the ids of the cells above it that its run needs
    first, in order: those that may bind or change a name it reads (or one sharing an object
    with it), then what they read. No call changes the names in ``unchanged_by_calls``."""
    unchanged = frozenset(unchanged_by_calls)
    cells = [(cell_id, _merged(codes, unchanged)) for cell_id, codes in _cell_codes(step)]
    set_up = [uses(c.code, unchanged) for c in step.setup]
    sharing = _Sharing([*set_up, *(u for _, u in cells)])
    needs: dict[str, list[str]] = {}
    for index, (cell_id, own) in enumerate(cells):
        wanted, opaque, picked = sharing.closure(set(own.reads)), own.opaque, []
        for above_id, above in reversed(cells[:index]):
            if opaque or (above.opaque and wanted) or not above.changes.isdisjoint(wanted):
                picked.append(above_id)
                wanted = sharing.closure(wanted | above.reads)
                opaque = opaque or above.opaque
        needs[cell_id] = picked[::-1]
    return needs
