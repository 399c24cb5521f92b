"""The Pyodide plumbing that course, checking and web share.

The pinned lock (:mod:`.lock`), the package cache (:mod:`.cache`), where the built Pyodide core is
(:mod:`.dist`), unpacked release folders (:mod:`.release`), the learner bundle (:mod:`.bundle`) and
the Node runner with its ``.mjs`` files (:mod:`.node`). This room imports nothing else of
promptdojo but the package's own folder, so every other room may build on it.
"""
