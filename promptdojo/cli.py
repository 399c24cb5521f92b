"""The ``promptdojo`` command line: serve lessons (more commands join as they are built)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="promptdojo",
    help="Interactive lessons on LLM inference: serve them, author them, check them.",
    no_args_is_help=True,
    add_completion=False,
)


@app.callback()
def _main() -> None:
    """Interactive lessons on LLM inference: serve them, author them, check them."""


@app.command()
def serve(
    lessons_dir: Annotated[
        Path,
        typer.Argument(help="Folder holding one sub-folder per lesson.", show_default=True),
    ] = Path("lessons"),
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port to listen on.")] = 8000,
    dev: Annotated[
        bool, typer.Option("--dev", help="Development mode: show broken lessons' errors.")
    ] = False,
    package_cache: Annotated[
        Path | None,
        typer.Option(help="Folder of Pyodide package wheels (e.g. numpy) to serve to browsers."),
    ] = None,
) -> None:
    """Serve the lessons in LESSONS_DIR at http://HOST:PORT."""
    import uvicorn

    from promptdojo.web import Settings, create_app
    from promptdojo.web.assets import AssetsMissingError

    if not lessons_dir.is_dir():
        raise typer.BadParameter(f"{lessons_dir} is not a folder", param_hint="LESSONS_DIR")
    settings = Settings(
        lessons_dir=lessons_dir.resolve(),
        dev=dev,
        package_cache_dir=(package_cache or Path(".cache/pyodide-packages")).resolve(),
    )
    try:
        application = create_app(settings)
    except AssetsMissingError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"promptdojo: serving {lessons_dir} at http://{host}:{port}")
    uvicorn.run(application, host=host, port=port, log_level="info")
