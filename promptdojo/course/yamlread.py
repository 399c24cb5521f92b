"""YAML read with the limits lesson files need, and with libyaml where it reads the same."""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

try:  # PyYAML built with libyaml
    from yaml.cyaml import CParser
except ImportError:  # pragma: no cover - a PyYAML without it reads everything in Python
    CParser = None

#: How deep YAML values may nest (``[[[...]]]``); lesson keys need two levels at most.
MAX_YAML_DEPTH = 32


class _Limits:
    """No aliases and a depth limit, for a loader that composes its nodes in Python.

    An alias repeats a value without writing it out, so a few lines of them (a "billion laughs")
    stand for gigabytes once printed; thousands of nested brackets recurse past Python's limit.
    Both are mistakes at their line here, never a MemoryError or a RecursionError.
    """

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed: write the value out", mark
            )
        if self.depth >= MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, f"values nest more than {MAX_YAML_DEPTH} levels deep", mark
            )
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _LessonLoader(_Limits, yaml.SafeLoader):
    """PyYAML's safe loader, in Python, with :class:`_Limits`: the one whose errors are
    reported (its marks show the text around them)."""


if CParser is not None:

    class _FastLoader(_Limits, Composer, CParser, SafeConstructor, Resolver):
        """:class:`_LessonLoader` reading its events with libyaml (a tenth of the time), then
        composing and constructing them with the same Python code: on text :func:`load` gives
        it, the same data, and each key at the same place. Its marks hold no text, so a document
        it fails on is read again by :class:`_LessonLoader`."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

        def compose_scalar_node(self, anchor: str | None) -> yaml.ScalarNode:
            node = super().compose_scalar_node(anchor)
            node.style = node.style or None  # libyaml's plain style is "", PyYAML's None
            return node

else:  # pragma: no cover
    _FastLoader = None


def _read(loader_class: type, text: str) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        return node, loader.construct_document(node) if node is not None else None
    finally:
        loader.dispose()


#: Where libyaml and PyYAML part, and such text is read by :class:`_LessonLoader` alone: a tab
#: or a byte-order mark inside the text (libyaml takes a tab in a plain scalar, PyYAML refuses
#: it), a tag (``a: !`` is an empty text for libyaml, None for PyYAML), a ``?`` (an explicit
#: key; ``[a?]``, which PyYAML refuses), a block scalar's header (``|#``). Elsewhere they part
#: only on where an empty value is (``{a: }``, ``---``) and on the flow style of a list not
#: indented under its key, which the readers of ``fast`` results do not read.
_LIBYAML_DIFFERS = re.compile(r"[\t\ufeff!?|>]")


def load(text: str, fast: bool = False) -> tuple[yaml.Node | None, Any]:
    """The node tree of ``text`` and the data it makes, read by :class:`_LessonLoader`. With
    ``fast``, the same data and errors, and every key at the same place (what
    :func:`~promptdojo.course.metadata.load_mapping` reads): by :class:`_FastLoader` where
    PyYAML has libyaml, and by :class:`_LessonLoader` itself for whatever that one fails on (so
    every error is its own)."""
    if fast and _FastLoader is not None and not _LIBYAML_DIFFERS.search(text):
        try:
            return _read(_FastLoader, text)
        except Exception:  # read again below: the error reported is _LessonLoader's
            pass
    return _read(_LessonLoader, text)
