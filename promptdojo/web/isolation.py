"""The one inline script of the site: the kernel worker's early start, and cross-origin isolation
on hosts that send no headers.

On an isolated step page the script starts the kernel worker while the page still parses, from
the kernel configuration just above it; ``start.js`` adopts the worker once it has loaded.

A step page must be cross-origin isolated (``SharedArrayBuffer``, so Stop interrupts Python).
Where the host cannot send COOP and COEP, the service worker adds them, which takes one reload on
a learner's first visit. The script that registers the worker and reloads is inlined at the top
of the page (``templates/_isolation.js``), so it runs before anything else is fetched or parsed:
the reload comes as soon as the worker is in control. The content security policy allows it,
and only it, by its SHA-256.
"""

from __future__ import annotations

import base64
import hashlib

from markupsafe import Markup

from promptdojo.web.resources import templates_dir

#: The script's text, exactly as it stands between ``<script>`` and ``</script>`` in the page.
ISOLATION_SCRIPT = Markup((templates_dir() / "_isolation.js").read_text(encoding="utf-8"))
#: Its CSP source expression, for ``script-src``.
ISOLATION_SCRIPT_SOURCE = (
    "'sha256-"
    + base64.b64encode(hashlib.sha256(ISOLATION_SCRIPT.encode("utf-8")).digest()).decode()
    + "'"
)
