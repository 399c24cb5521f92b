"""``Accept-Encoding``, read once for every response that comes in several content codings.

RFC 9110 §12.5.3: a coding with ``q=0`` is refused (``br;q=0`` gets no brotli), ``*`` stands
for every coding not named, and ``identity`` is always acceptable unless refused.
"""

from __future__ import annotations

#: Codings that are the same thing under another name (RFC 9110 §8.4.1.3).
ALIASES = {"x-gzip": "gzip"}


def qualities(header: str) -> dict[str, float]:
    """``{coding: q}`` of an ``Accept-Encoding`` value; a malformed ``q`` counts as refused."""
    found: dict[str, float] = {}
    for part in header.split(","):
        coding, *params = (piece.strip() for piece in part.split(";"))
        coding = ALIASES.get(coding.lower(), coding.lower())
        if not coding:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        found[coding] = max(found[coding], q) if coding in found else q
    return found


def accepts(header: str, coding: str) -> bool:
    """Whether a request with ``Accept-Encoding: header`` takes ``coding``."""
    found = qualities(header)
    if coding in found:
        return found[coding] > 0
    if "*" in found:
        return found["*"] > 0
    return coding == "identity"
