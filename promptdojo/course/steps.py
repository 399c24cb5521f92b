"""One step file: front matter, prose, cells, and the exercises their checks and hints belong to."""

from __future__ import annotations

import ast
import builtins
import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from promptdojo.course.cells import (
    Fence,
    ImportRules,
    defined_names,
    fence_attrs,
    python_cell,
    unclosed,
)
from promptdojo.course.exercises import link_exercises, wrong_id
from promptdojo.course.giveaway import giveaways
from promptdojo.course.links import collect_links, mark_headings
from promptdojo.course.maths import MathError, to_mathml
from promptdojo.course.maths import render as render_maths
from promptdojo.course.metadata import load_mapping
from promptdojo.course.model import Cell, CellKind, Hint, Link, Location, Prose, Step
from promptdojo.course.problems import Report, did_you_mean, read_text

STEP_FILE = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>[a-z0-9][a-z0-9-]*)\.md$")
STEP_KEYS = ("title", "summary")
HINT_LANGUAGES = ("markdown", "md")


def markdown(html: bool = False) -> MarkdownIt:
    """The one markdown dialect of lessons: CommonMark, tables, front matter, maths, no raw HTML.

    Maths is ``$…$`` inline and ``$$…$$`` on its own lines, rendered to MathML; as in Pandoc, a
    ``$`` followed by a space or a digit (``$5``) is a dollar, not maths. With ``html``, raw
    HTML is recognised (as ``html_block`` and ``html_inline`` tokens) so that a step's one parse
    can report it; :func:`parse_step` never renders those tokens as HTML.
    """
    return (
        MarkdownIt("commonmark", {"html": html})
        .enable("table")
        .use(front_matter_plugin)
        .use(
            dollarmath_plugin,
            allow_labels=False,
            allow_space=False,
            allow_digits=False,
            double_inline=True,
            renderer=render_maths,
        )
    )


#: Parses each step once: the lesson dialect, raw HTML recognised so that it can be reported.
#: Its first rule, which makes line ends ``\n`` and NUL characters U+FFFD with regular
#: expressions (a call per line), is :func:`_normalized`'s to do instead.
_SOURCE = markdown(html=True)
_SOURCE.core.ruler.disable("normalize")
#: Parses hints, the markdown of ``{.hint}`` fences: their text comes from a step normalized
#: already, so that rule has nothing to do there either.
_HINTS = markdown()
_HINTS.core.ruler.disable("normalize")


def _normalized(text: str) -> str:
    """What markdown-it's ``normalize`` rule makes of ``text``, at a fraction of the cost."""
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


_TAG = re.compile(r"<\s*/?\s*([A-Za-z][A-Za-z0-9-]*)|<!--")
_HTML_FIXES = {
    "sub": "write maths instead: $x_1$",
    "sup": "write maths instead: $x^2$",
    "br": "end the line with a backslash, or start a new paragraph",
    "b": "write **bold**",
    "strong": "write **bold**",
    "i": "write *italic*",
    "em": "write *italic*",
    "code": "write `code`",
    "a": "write [text](https://...)",
    "img": "write ![alt text](picture.svg)",
}


def _check_raw_html(tokens: list[Token], path: Path, report: Report) -> None:
    """Raw HTML would show as literal text (lessons render with HTML off): report its line."""
    for token in tokens:
        candidates = []
        if token.type == "html_block" and token.map:
            candidates.append((token.content, token.map[0] + 1))
        elif token.type == "inline" and token.map and token.children:
            for child in token.children:
                if child.type == "html_inline":
                    line = (
                        token.map[0]
                        + 1
                        + token.content[: token.content.find(child.content)].count("\n")
                    )
                    candidates.append((child.content, line))
        for html, line in candidates:
            if html.lstrip().startswith("</"):
                continue  # the opening tag was reported
            match = _TAG.search(html)
            tag = (match.group(1) or "").lower() if match else ""
            what = "an HTML comment" if html.lstrip().startswith("<!--") else f"<{tag}>"
            fix = _HTML_FIXES.get(tag, "use Markdown (**bold**, *italic*, `code`, $maths$)")
            if what == "an HTML comment":
                fix = "remove it: comments would show as text"
            report.add(
                path, line, f"raw HTML ({what}) is not allowed: it would show as literal text", fix
            )


def _as_text(tokens: list[Token]) -> list[Token]:
    """``tokens`` with raw HTML (reported already) as literal text, as HTML off renders it."""
    shown = []
    for token in tokens:
        if token.type == "html_block":
            text = Token("text", "", 0, content=token.content.rstrip("\n"))
            inline = Token("inline", "", 0, content=text.content, children=[text])
            shown += [Token("paragraph_open", "p", 1), inline, Token("paragraph_close", "p", -1)]
            continue
        if token.type == "inline" and token.children:
            token.children = [
                Token("text", "", 0, content=c.content) if c.type == "html_inline" else c
                for c in token.children
            ]
        shown.append(token)
    return shown


def _check_maths(token: Token, path: Path, report: Report) -> None:
    """Maths the page could not render, at its line, with what to write."""
    found = []
    if token.type == "math_block" and token.map:
        found.append((token.content, True, token.map[0] + 1))
    elif token.type == "inline" and token.map and token.children:
        for child in token.children:
            if child.type.startswith("math_inline"):
                offset = token.content.find(child.content)
                line = token.map[0] + 1 + token.content[: max(offset, 0)].count("\n")
                found.append((child.content, child.type == "math_inline_double", line))
    for tex, display, line in found:
        try:
            to_mathml(tex.strip(), display)
        except MathError as exc:
            report.add(
                path,
                line,
                f"cannot render the maths ${tex.strip()}$: {exc}",
                "write TeX such as \\frac{p(x)}{q(x)}, x_1, \\sum_{i=1}^{n}, \\min(1, r)",
            )


def _check_raises(
    cells: list[Cell], trees: dict[str, ast.Module], path: Path, report: Report
) -> None:
    """``raises=`` must name an exception class: a built-in one, or one the step defines or
    imports (its cells' syntax ``trees``, by code); a name that only differs in case or spelling
    from one gets a "did you mean"."""
    known = set(_BUILTIN_EXCEPTIONS)
    for cell in cells:
        if cell.code in trees:
            known |= defined_names(trees[cell.code])
    for cell in cells:
        name = cell.raises
        if not name or name in known or not name.isidentifier():
            continue
        same_case = [k for k in known if k.lower() == name.lower()]
        close = same_case or difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        if not close and name[:1].isupper():
            continue  # perhaps a library's exception (numpy's LinAlgError): the check will tell
        line = cell.first_line - 1
        hint = (
            f"did you mean {close[0]!r}?"
            if close
            else "name an exception class: a built-in one (ValueError) or one the step "
            "defines or imports"
        )
        report.add(path, line, f"raises={name!r} is not an exception this step can raise", hint)


def _is_exception(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


_BUILTIN_EXCEPTIONS = frozenset(n for n in dir(builtins) if _is_exception(getattr(builtins, n)))


def _front_matter(tokens: list[Token], path: Path, slug: str, report: Report) -> str:
    """The step's title, from its front matter (``tokens[0]`` when it has one), each mistake
    reported; the slug, as words, when it has none."""
    meta: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    front_matter_failed = False
    if tokens and tokens[0].type == "front_matter":
        loaded = load_mapping(tokens[0].content, path, 2, report, "front matter")
        front_matter_failed = loaded is None
        if loaded is not None:
            meta, key_lines = loaded
            for key in meta:
                if key not in STEP_KEYS:
                    report.add(
                        path,
                        key_lines.get(str(key)),  # keys may be None or numbers
                        f"unknown front matter key {key!r}",
                        did_you_mean(key, STEP_KEYS),
                    )
    title = meta.get("title")
    if title and not isinstance(title, str | int | float):
        report.add(
            path,
            key_lines.get("title"),
            f"the title must be text, not {type(title).__name__}",
            'write title: "…" on one line, in quotes if it holds ": " or starts with [ or {',
        )
        front_matter_failed, title = True, None
    if not title:
        if not front_matter_failed:  # else its mistake was reported
            report.add(
                path,
                1,
                "step has no title",
                "start the file with front matter: ---, title: ..., ---",
            )
        title = slug.replace("-", " ").capitalize()
    return str(title)


@dataclass
class _Parts:
    """What a step's tokens become, in order: prose and visible cells (``parts``), hidden setup
    cells, cells attached to an exercise, hints, and the links of prose and hints."""

    md: MarkdownIt
    path: Path
    report: Report
    rules: ImportRules
    links: list[Link]
    parts: list[Prose | Cell] = field(default_factory=list)
    setup: list[Cell] = field(default_factory=list)
    attached: list[Cell] = field(default_factory=list)
    hints: list[tuple[str | None, Hint, int]] = field(default_factory=list)
    prose: list[Token] = field(default_factory=list)
    seen_ids: dict[str, int] = field(default_factory=dict)
    trees: dict[str, ast.Module] = field(default_factory=dict)  # each cell's code parsed, once
    index: int = 0

    def flush(self) -> None:
        """The prose read since the last cell, rendered as one part."""
        if self.prose:
            self.parts.append(Prose(self.md.renderer.render(self.prose, self.md.options, {})))
            self.prose.clear()

    def read(self, token: Token, lines: list[str]) -> None:
        """One top-level token: prose, a cell, a hint, or a fence shown as code."""
        if token.type != "fence":
            _check_maths(token, self.path, self.report)
            self.prose.append(token)
            return
        fence = fence_attrs(token, self.path, self.report)
        if unclosed(token, lines):
            self.report.add(
                self.path,
                fence.line,
                "code fence is never closed",
                f"add a line with {token.markup} after the code",
            )
        is_hint = "hint" in fence.attrs.get("class", "").split()
        if fence.language == "python":
            self.cell(fence)
        elif is_hint and fence.language in HINT_LANGUAGES:
            hint_tokens = _HINTS.parse(token.content)  # its links are checked as the prose's are
            self.links += collect_links(hint_tokens, self.path, first_line=fence.line + 1)
            html = self.md.renderer.render(hint_tokens, self.md.options, {})
            hint = Hint(html, Location(self.path, fence.line))
            self.hints.append((fence.attrs.get("for"), hint, fence.line))
        elif is_hint:
            self.report.add(
                self.path,
                fence.line,
                f"a hint must be a markdown fence, not {fence.language or 'plain'}",
                "write ```markdown {.hint for=ID}",
            )
        else:
            self.prose.append(token)

    def cell(self, fence: Fence) -> None:
        """A ``python`` fence: a cell, numbered unless it is a wrong answer, its id unique."""
        # Wrong answers take no number: adding one never renames the cells after it.
        wrong = "wrong" in fence.attrs.get("class", "").split()
        self.index += 0 if wrong else 1
        cell = python_cell(fence, self.path, self.report, self.index, self.rules, self.trees)
        if cell is None:
            return
        if wrong and "id" not in fence.attrs:
            cell = replace(cell, id=wrong_id(cell, self.attached))
        if cell.id in self.seen_ids:
            self.report.add(
                self.path,
                fence.line,
                f"duplicate cell id {cell.id!r} (first used on line {self.seen_ids[cell.id]})",
                "give each cell its own #id",
            )
        self.seen_ids.setdefault(cell.id, fence.line)
        if cell.kind is CellKind.SETUP:
            self.setup.append(cell)
        elif cell.visible:
            self.flush()
            self.parts.append(cell)
        else:
            self.attached.append(cell)


def parse_step(
    md: MarkdownIt, path: Path, number: int, slug: str, report: Report, rules: ImportRules
) -> Step | None:
    """The step in ``path`` (its number and slug from the file name), every mistake reported;
    None when the file cannot be read."""
    text = read_text(path, report)
    if text is None:
        return None
    lines = text.splitlines()
    tokens = _SOURCE.parse(_normalized(text))  # the step's one parse
    _check_raw_html(tokens, path, report)
    tokens = _as_text(tokens)
    title = _front_matter(tokens, path, slug, report)
    if tokens and tokens[0].type == "front_matter":
        tokens = tokens[1:]
    headings = mark_headings(tokens)
    read = _Parts(md, path, report, rules, collect_links(tokens, path))
    for token in tokens:
        read.read(token, lines)
    read.flush()
    cells = [*read.setup, *(c for c in read.parts if isinstance(c, Cell)), *read.attached]
    _check_raises(cells, read.trees, path, report)
    exercises, orphans = link_exercises(read.parts, read.attached, read.hints, path, report)
    step = Step(
        number=number,
        slug=slug,
        title=title,
        path=path,
        parts=tuple(read.parts),
        setup=tuple(read.setup),
        exercises=exercises,
        orphans=orphans,
        links=tuple(sorted(read.links, key=lambda link: link.location.line or 0)),
        headings=headings,
    )
    return replace(step, warnings=tuple(giveaways(step, read.trees)))
