"""The web server and browser runtime: FastAPI app factory, pages, assets and the learner bundle."""

from promptdojo.web.app import create_app
from promptdojo.web.settings import Settings

__all__ = ["Settings", "create_app"]
