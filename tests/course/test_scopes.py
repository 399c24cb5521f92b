"""Python's scopes as the needs reading sees them (promptdojo.course.scopes)."""

from __future__ import annotations

import ast

from promptdojo.course.scopes import resolved, scope_of


def _first(code: str) -> ast.AST:
    return ast.parse(code).body[0]


def test_a_function_binds_its_parameters_and_body_names_but_not_what_its_header_reads() -> None:
    node = _first(
        "@deco\ndef f(x, k=k, *rest, deco=None, **kw):\n    y = x\n    global g\n    g = 1\n"
    )
    names, globals_ = scope_of(node)
    assert names == {"x", "rest", "kw", "y"}  # k and deco are read where f is made
    assert globals_ == {"g"}


def test_a_comprehension_binds_its_targets_except_what_its_first_iterable_reads() -> None:
    assert scope_of(_first("[a * b for a in xs for b in a]").value)[0] == {"a", "b"}
    assert scope_of(_first("[x for x in x]").value)[0] == frozenset()
    assert scope_of(_first("[None for o.x in range(3)]").value)[0] == frozenset()


def test_other_nodes_open_no_scope() -> None:
    assert scope_of(_first("class K:\n    n = 1\n")) is None
    assert scope_of(_first("x = 1")) is None


def test_a_name_resolves_to_the_innermost_scope_that_binds_it_or_a_global_declaration() -> None:
    frames = (("outer@1:0.", frozenset({"x", "y"}), frozenset()),)
    assert resolved("x", frames) == "outer@1:0.x"
    assert resolved("z", frames) == "z"
    inner = (*frames, ("inner@2:4.", frozenset({"y"}), frozenset({"x"})))
    assert resolved("x", inner) == "x"  # inner declares it global
    assert resolved("y", inner) == "inner@2:4.y"


def test_a_match_pattern_binds_its_captures() -> None:
    node = _first("def f(p):\n    match p:\n        case [a, *rest]:\n            pass\n")
    assert scope_of(node)[0] == {"p", "a", "rest"}
