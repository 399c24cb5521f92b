"""The web server and browser runtime: FastAPI app factory, pages, assets and package files.

Import :func:`promptdojo.web.app.create_app` for the app. Only the command line imports this room;
what the other rooms share with it (the lock, the package cache, the built Pyodide) lives in
:mod:`promptdojo.pyodide`.
"""
