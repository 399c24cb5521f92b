"""Which of a step's names may share an object, and what a call of a step's function does to
them: the two ways a change reaches a name that the changing code never mentions.

:mod:`promptdojo.course.needs` reads each cell's names; here they are joined across cells. A
link (``b = a``, ``a.append(b)``, ``f(a, b)``) ties names that may come to share an object. A
function or class the step defines is tied to the cells' names its body reads and changes
(whatever is passed to ``keep(v)`` may end up in the list its body appends to; what ``get()``
returns may be the global it reads), and a cell that may call it (it reads the function, or a
name that may share an object with it: ``h = f``, ``k = K()``) reads and changes what its body
does.

Example:
    >>> from promptdojo.course.needs import uses
    >>> found = with_calls([uses("a = []\\ndef get():\\n    return a"), uses("b = get()")])
    >>> sorted(Sharing(found).closure({"b"}))
    ['a', 'b', 'get']
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptdojo.course.needs import Uses

_BUILTINS = frozenset(dir(builtins))


class Sharing:
    """Which names may share an object, from every link the cells in ``found`` make. Imported
    names (never bound otherwise) and builtins (never bound) do not: ``x = np.exp(y)`` does not
    make every array share numpy."""

    def __init__(self, found: list[Uses]) -> None:
        imported = frozenset().union(*(u.imported for u in found))
        assigned = frozenset().union(*(u.assigned for u in found))
        bound = frozenset().union(*(u.changes for u in found)) - imported
        outside = (imported - assigned) | (_BUILTINS - bound)
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


def _effects(found: list[Uses]) -> dict[str, tuple[set[str], set[str]]]:
    """What the body of each function or class of ``found`` changes and reads of the cells'
    names, through the calls it makes in turn (a function calling another does what that one
    does)."""
    effects: dict[str, tuple[set[str], set[str]]] = {}
    for name, changed, read in (e for u in found for e in u.effects):
        known = effects.setdefault(name, (set(), set()))
        known[0].update(changed)
        known[1].update(read)
    grew = True
    while grew:
        grew = False
        for changed, read in effects.values():
            before = len(changed) + len(read)
            for other in read & effects.keys():
                changed |= effects[other][0]
                read |= effects[other][1]
            grew = grew or len(changed) + len(read) != before
    return effects


def with_calls(found: list[Uses]) -> list[Uses]:
    """``found`` (the cells in order), each cell also changing and reading what the functions and
    classes it may call change and read (``add(3)`` changes ``items`` when ``add``'s body appends
    to it, and so does ``k.add(3)`` after ``k = K()``), and its links joined by a tie of every
    function it defines to the names its body reads and changes. A cell may call what a name it
    reads before binding it holds, by itself or through the cells above (its own functions'
    bodies are in its reading already); a function's tie to the names its body reads makes none
    of them a function."""
    effects = _effects(found)
    result = []
    for index, u in enumerate(found):
        names = [name for name, _, _ in u.effects]
        ties = tuple(frozenset({name, *effects[name][0], *effects[name][1]}) for name in names)
        u = replace(u, links=u.links + ties) if ties else u
        reachable = Sharing(found[:index]).closure(set(u.entry)) if index else set(u.entry)
        called = [effects[name] for name in reachable & effects.keys()]
        if not called or u.opaque:
            result.append(u)
            continue
        changes = u.changes.union(*(c for c, _ in called))
        reads = frozenset().union(*(r for _, r in called))
        result.append(replace(u, reads=u.reads | reads, changes=changes, entry=u.entry | reads))
    return result
