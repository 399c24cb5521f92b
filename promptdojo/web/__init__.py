"""The web server and browser runtime: FastAPI app factory, pages, assets and package files.

Import :func:`promptdojo.web.app.create_app` for the app; this package's ``__init__`` stays empty so
that other rooms can read :mod:`promptdojo.web.resources` without loading FastAPI.
"""
