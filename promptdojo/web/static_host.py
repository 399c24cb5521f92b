"""What a static host needs besides the files: the ``_headers`` file (Netlify, Cloudflare Pages).

Its rules say the same as the server: the security and isolation headers on every path, immutable
caching for content-hashed and versioned files, ``no-cache`` for pages and the service worker,
and the content types browsers insist on (WebAssembly, JavaScript modules) on the exact files.
"""

from __future__ import annotations

from collections.abc import Iterable

from promptdojo.web.headers import SECURITY_HEADERS
from promptdojo.web.staticfiles import IMMUTABLE

#: Folders (below the base) whose files never change under their name.
IMMUTABLE_FOLDERS = ("assets", "pyodide", "bundle", "snapshot", "packages")
#: Content types some hosts get wrong, by file suffix.
CONTENT_TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript"}
NO_CACHE = "no-cache"


def _title(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-"))


def headers_file(base: str, files: Iterable[str]) -> str:
    """The ``_headers`` file for an export below ``base`` holding ``files`` (paths below it)."""
    files = sorted(files)
    # One rule per line: a line break in a path would add rules of its own.
    unsafe = [path for path in (base, *files) if any(c.isspace() for c in path)]
    if unsafe:
        raise ValueError(f"a path in _headers cannot hold white space: {unsafe[0]!r}")
    lines = [
        "# Response headers for Netlify and Cloudflare Pages (written by promptdojo export).",
        "# Other hosts: see docs/deploying.md. The service worker (sw.js) supplies the first",
        "# group on hosts that send none, such as GitHub Pages.",
        f"{base}*",
    ]
    lines += [f"  {_title(name.decode())}: {value.decode()}" for name, value in SECURITY_HEADERS]
    for folder in IMMUTABLE_FOLDERS:
        if any(path.startswith(folder + "/") for path in files):
            lines += [f"{base}{folder}/*", f"  Cache-Control: {IMMUTABLE}"]
    # Pages and the service worker change with every export: revalidated on each visit. Steps
    # share one rule, so the file stays within Cloudflare Pages' 100 rules for any course.
    for path in ("", "404.html", "lessons/*", "reference/*", "sw.js"):
        lines += [f"{base}{path}", f"  Cache-Control: {NO_CACHE}"]
    for path in files:
        suffix = path[path.rfind(".") :] if "." in path else ""
        if suffix in CONTENT_TYPES:
            lines += [f"{base}{path}", f"  Content-Type: {CONTENT_TYPES[suffix]}"]
    return "\n".join(lines) + "\n"


def parse_headers_file(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """The rules of a ``_headers`` file: ``[(path pattern, [(name, value), ...]), ...]``."""
    rules: list[tuple[str, list[tuple[str, str]]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            rules.append((line.strip(), []))
        elif rules and ":" in line:
            name, value = line.strip().split(":", 1)
            rules[-1][1].append((name.strip(), value.strip()))
        else:
            raise ValueError(f"_headers:{number}: a header line must follow a path line")
    return rules


def matches(pattern: str, path: str) -> bool:
    """True when the URL ``path`` matches the rule ``pattern`` (``*`` matches anything)."""
    import fnmatch

    return fnmatch.fnmatchcase(path, pattern.replace("[", "[[]"))
