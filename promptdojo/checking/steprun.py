"""The judge's old home: see :mod:`promptdojo.checking.judge` and :mod:`.outcome`."""

from promptdojo.checking.judge import StepRunner
from promptdojo.checking.limits import CellTimeout, time_limit
from promptdojo.checking.outcome import CellOutcome, Output, Status

__all__ = ["CellOutcome", "CellTimeout", "Output", "Status", "StepRunner", "time_limit"]
