"""promptdojo: interactive lessons on how LLM inference really works.

The package has three rooms:

* the learner library (``decoding``, ``kvcache``, ``kvmemory``, ``quantization``, ``display``,
  ``tinylm`` and the cell ``kernel``): numpy and the standard library only, so it runs unchanged
  in Pyodide;
* authoring and checking (``course``, ``checking``);
* the web server and browser runtime (``web``).

Importing ``promptdojo`` itself loads nothing heavy: no numpy, no FastAPI.
"""

__version__ = "0.1.0"
