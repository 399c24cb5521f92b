"""What a cell reads before binding it (promptdojo/course/flow.py)."""

from __future__ import annotations

import ast

import pytest

from promptdojo.course.flow import entry_reads


def entry(code: str) -> set[str]:
    return entry_reads(ast.parse(code))


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        # bound, then read: the cell's own from there on
        ("s = make()\ns.run()", {"make"}),
        ("x = x + 1", {"x"}),
        ("x += 1", {"x"}),
        # a module is every cell's: importing it binds nothing of the cell's own (a seed above)
        ("import random\nrandom.random()", {"random"}),
        ("def f(): return 1\nf()", set()),
        ("a, *b = pair\nprint(a, b)", {"pair", "print"}),
        ("x: int\nprint(x)", {"int", "print", "x"}),  # an annotation alone binds nothing
        ("x: int = 1\nprint(x)", {"int", "print"}),
        # a loop's target inside the loop; after it, the loop may not have run
        ("for s in items:\n    s.run()", {"items"}),
        ("for s in items:\n    pass\ns.run()", {"items", "s"}),
        ("for a.x in items:\n    pass", {"a", "items"}),
        ("while go():\n    y = 1\nprint(y)", {"go", "print", "y"}),
        # an if binds a name for sure only when both branches do
        ("if c:\n    y = 1\nelse:\n    y = 2\nprint(y)", {"c", "print"}),
        ("if c:\n    y = 1\nprint(y)", {"c", "print", "y"}),
        ("y = 0\nif c:\n    del y\nprint(y)", {"c", "print", "y"}),
        # a with's target is bound in its body; a try's body may stop anywhere
        ("with open(p) as f:\n    f.read()", {"open", "p"}),
        ("with ctx():\n    y = 1\nprint(y)", {"ctx", "print", "y"}),
        ("with suppress(E) as (a, b):\n    pass\nprint(a)", {"E", "a", "print", "suppress"}),
        (
            "try:\n    y = f()\nexcept ValueError as e:\n    print(e, y)",
            {"f", "ValueError", "print", "y"},
        ),
        ("try:\n    y = 1\nfinally:\n    pass\nprint(y)", {"print", "y"}),
        # match captures are bound in their case only
        ("match p:\n    case [x, *rest]:\n        print(x, rest)\nprint(x)", {"p", "print", "x"}),
        ("match p:\n    case Color.RED if x:\n        pass", {"p", "Color", "x"}),
        # del reads the name it unbinds, and it is unbound after
        ("del x", {"x"}),
        ("x = 1\ndel x\nprint(x)", {"print", "x"}),
        ("x = 1\nfor i in r:\n    print(x)\n    del x", {"print", "r", "x"}),
        # a function's body reads the cells' names when it is called: bound before the def, or not
        ("def f():\n    return y\ny = 1\nf()", {"y"}),
        ("y = 1\ndef f():\n    return y\nf()", set()),
        ("def f(k=k):\n    t = 0\n    t += k\n    return t", {"k"}),
        ("def f():\n    global g\n    g += 1", {"g"}),
        ("[x for x in x]", {"x"}),
        ("[i * n for i in range(3)]", {"n", "range"}),
        ("class A:\n    y = z", {"z"}),
    ],
)
def test_a_cell_reads_only_what_it_has_not_bound_on_every_way_there(
    code: str, expected: set[str]
) -> None:
    assert entry(code) == expected
