"""The learner bundle's old home: see :mod:`promptdojo.pyodide.bundle`."""

from promptdojo.pyodide.bundle import LEARNER_MODULES, LearnerBundle, build_bundle

__all__ = ["LEARNER_MODULES", "LearnerBundle", "build_bundle"]
