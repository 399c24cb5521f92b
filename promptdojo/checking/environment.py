"""The environment lesson cells see under ``check``: an allowlist, not the checker's own.

A CI job's secrets live in its environment; a cell that prints ``os.environ`` would put them in
the check's report, the lesson's records and so on every page. Cells get only what running
Python and Node needs, plus the names given with ``--pass-env NAME``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping

#: Names passed through as they are, when set.
ALLOWED = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "PYTHONPATH",  # where promptdojo itself may come from
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "SYSTEMROOT",  # Windows needs it to start Python at all
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
    }
)
#: Prefixes of names passed through (the locale's categories).
ALLOWED_PREFIXES = ("LC_",)


def cell_environment(
    pass_env: Iterable[str] = (),
    *,
    source: Mapping[str, str] | None = None,
    defaults: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowed names of ``source`` (``os.environ``) and those of ``pass_env``, over
    ``defaults`` (which a set variable overrides)."""
    source = os.environ if source is None else source
    extra = set(pass_env)
    kept = {
        name: value
        for name, value in source.items()
        if name in ALLOWED or name in extra or name.startswith(ALLOWED_PREFIXES)
    }
    return {**(defaults or {}), **kept}


@contextlib.contextmanager
def scrubbed_environ(pass_env: Iterable[str] = ()) -> Iterator[None]:
    """Within the block, this process's environment is :func:`cell_environment`'s (for cells
    that run in this very process: the pytest plugin); the whole of it comes back after."""
    saved = dict(os.environ)
    kept = cell_environment(pass_env, source=saved)
    try:
        for name in set(saved) - set(kept):
            del os.environ[name]
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
