"""Which cells above a cell its run needs first, read from the code as the lesson wrote it.

Running a cell first runs the cells above it that have not run in this Python (``order.js``), so
that no cell fails for a name an earlier one defines. Most cells need only some of those: step 7's
``size`` multiplies two numbers, yet its first run used to score four models first. The server
reads each visible cell's names and sends, for each, the cells above that may bind or change a name
it reads before binding it (:mod:`promptdojo.course.flow`), and those cells' own needs in turn. The
page runs only those while the cells are as written; once the learner edited the cell or one above
it, it runs them all, as before.

The reading is conservative: a cell may change a name when it binds it (assignment, ``import``,
``def``, loop target, ``global``), stores into it (``x[k] = v``, ``x.a = v``, ``x += 1``), calls a
method on it or passes it to a call (``x.append(1)``, ``np.random.seed(0)``, ``f(x)``; the builtins
that never change their arguments, like ``print`` and ``len``, aside), or iterates it (a
generator). Names may share an object (``b = a``, ``row = grid[0]``, ``a.append(b)``, ``f(a, b)``):
a change through one is a change to every name it may share with through the cells above, set-up
cells included; imported names and builtins share nothing (``x = np.exp(y)`` does not tie every
array to numpy). A call of a function the step defines, through any name that may hold it, reads
and changes what its body does (:mod:`promptdojo.course.sharing`). The names a function or a
comprehension binds are its own (``show@3:0.name``), so a helper's loop variable is never a cell's
name of the same spelling. A cell that reaches names no syntax shows (``exec``, ``globals()``,
``import *``) or does not parse needs, and may change, everything.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from promptdojo.course.flow import entry_reads
from promptdojo.course.model import Step
from promptdojo.course.scopes import Frames, bound_by_pattern, resolved, scope_of
from promptdojo.course.sharing import Sharing, with_calls

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
    #: For each function or class the code defines at its top level: the cells' names its body
    #: may change, and those it reads. A cell calling it does the same.
    effects: tuple[tuple[str, frozenset[str], frozenset[str]], ...] = ()
    #: Of ``reads``, those the code may read before binding them: what a cell above can give it.
    entry: frozenset[str] = frozenset()
    #: Names it binds other than by ``import`` (assignment, ``def``, a loop's target...).
    assigned: frozenset[str] = frozenset()
    #: Names a ``global`` statement in it declares: a call of that function may rebind them.
    declared: frozenset[str] = frozenset()


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


#: A node still to walk: the link its names join, its scopes, the top-level definition it is in.
_Pending = tuple[ast.AST, set[str] | None, Frames, str | None]


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


def _in_place(
    node: ast.AST, touched: list[ast.AST], frames: Frames, unchanged: frozenset[str]
) -> tuple[set[str], set[str], set[int]]:
    """The names ``node`` reads and changes through the expressions it ``touched`` (a name
    changed in place is also read: the change builds on what it held), and the Name nodes of
    ``unchanged`` it is called on or given, which it leaves unchanged and links to nothing."""
    apart: set[int] = set()
    if isinstance(node, ast.Call) and unchanged:
        found = _called_on(node, unchanged)
        apart = {id(n) for n in found if resolved(n.id, frames) == n.id}
    kept = [t for t in touched if id(t) not in apart and id(_receiver(t)) not in apart]

    def fresh(name: str) -> bool:
        return name in unchanged and resolved(name, frames) == name

    roots = {id(t): _root(t, fresh) for t in touched}
    found_reads = {resolved(name, frames) for name in roots.values() if name is not None}
    found_changes = {resolved(roots[id(t)], frames) for t in kept if roots[id(t)] is not None}
    return found_reads, found_changes, apart


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
    assigned: set[str] = set()
    declared: set[str] = set()
    links: list[set[str]] = []
    kept_apart: set[int] = set()  # Name nodes a call on an unchanged name does not link
    # What each top-level function or class's body reads and changes of the cells' names.
    effects: dict[str, tuple[set[str], set[str]]] = {}
    pending: list[_Pending] = [(tree, None, (), None)]
    while pending:
        node, owner, frames, within = pending.pop()
        owner = _link_of(node, owner, links)
        body_reads, body_changes = effects[within] if within is not None else (reads, changes)
        if isinstance(node, ast.Name):
            name = resolved(node.id, frames)
            for found_in in (reads,) if isinstance(node.ctx, ast.Load) else (changes, assigned):
                found_in.add(name)
            (body_reads if isinstance(node.ctx, ast.Load) else body_changes).add(name)
            if owner is not None and id(node) not in kept_apart:
                owner.add(name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            changes.add(resolved(node.name, frames))
            assigned.add(resolved(node.name, frames))
            if within is None:
                within = node.name
                effects.setdefault(within, (set(), set()))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return _EVERYTHING
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
            changes |= imported
        elif isinstance(node, ast.Global | ast.Nonlocal):
            changes |= set(node.names)
            declared |= set(node.names) if isinstance(node, ast.Global) else set()
        elif (captured := bound_by_pattern(node)) is not None:  # case Point(x=px), case [*rest]
            changes.add(resolved(captured, frames))
            body_changes.add(resolved(captured, frames))
        if type(node) in _MAY_CHANGE:
            touched = _touched(node)
            if touched is None:
                return _EVERYTHING
            found_reads, found_changes, apart = _in_place(node, touched, frames, unchanged)
            kept_apart |= apart
            reads |= found_reads
            changes |= found_changes
            body_reads |= found_reads
            body_changes |= found_changes
        scope = scope_of(node)
        if scope is not None:
            label = getattr(node, "name", type(node).__name__.lower())
            frames = (*frames, (f"{label}@{node.lineno}:{node.col_offset}.", *scope))
        for name in node._fields:
            child = getattr(node, name, None)
            items = child if isinstance(child, list) else [child]
            pending += [(i, owner, frames, within) for i in items if isinstance(i, _WALKED)]
    shared = tuple(frozenset(link) for link in links if len(link) > 1)
    found = tuple(
        (
            name,
            frozenset(c for c in changed if "@" not in c),
            frozenset(r for r in read if "@" not in r),
        )
        for name, (read, changed) in effects.items()
    )
    frozen = (frozenset(reads), frozenset(changes), False, shared, frozenset(imported), found)
    return Uses(*frozen, frozenset(entry_reads(tree)), frozenset(assigned), frozenset(declared))


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
        tuple(effect for u in found for effect in u.effects),
        frozenset().union(*(u.entry for u in found)),
        frozenset().union(*(u.assigned for u in found)),
        frozenset().union(*(u.declared for u in found)),
    )


def needed_cells(step: Step, unchanged_by_calls: Iterable[str] = ()) -> dict[str, list[str]]:
    """For each visible cell of ``step``, the ids of the cells above it that its run needs
    first, in order: those that may bind or change a name it reads before binding it (or one
    sharing an object with it), then what they read. Names share objects through what the cells
    above did (the set-up cells' included), not through what the cell itself or those below it
    do. No call changes the names in ``unchanged_by_calls``."""
    unchanged = frozenset(unchanged_by_calls)
    ids, codes = zip(*_cell_codes(step), strict=True) if step.cells else ((), ())
    set_up = [uses(c.code, unchanged) for c in step.setup]
    found = with_calls([*set_up, *(_merged(code, unchanged) for code in codes)])
    # A name some function may rebind (``global x`` in its body) is read where it is read.
    clobbered = frozenset().union(*(u.declared for u in found))
    found = [replace(u, entry=u.entry | (u.reads & clobbered)) for u in found]
    cells = list(zip(ids, found[len(set_up) :], strict=True))
    needs: dict[str, list[str]] = {}
    for index, (cell_id, own) in enumerate(cells):
        sharing = Sharing(found[: len(set_up) + index])
        wanted, opaque, picked = sharing.closure(set(own.entry)), own.opaque, []
        for above_id, above in reversed(cells[:index]):
            if opaque or (above.opaque and wanted) or not above.changes.isdisjoint(wanted):
                picked.append(above_id)
                wanted = sharing.closure(wanted | above.entry)
                opaque = opaque or above.opaque
        needs[cell_id] = picked[::-1]
    return needs
