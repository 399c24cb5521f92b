"""``python -m promptdojo`` is the ``promptdojo`` command."""

from promptdojo.cli import app

app(prog_name="promptdojo")
