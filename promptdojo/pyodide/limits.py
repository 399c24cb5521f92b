"""How a runaway cell is stopped in Pyodide, wherever it runs: the page's worker or the Node check.

First SIGINT goes into the interrupt buffer (Python raises ``KeyboardInterrupt`` in the cell);
if the cell has not ended :data:`STOP_GRACE_SECONDS` later, its worker is terminated. The page
gets this number through the kernel config, the Node check through its job.
"""

#: Seconds an interrupted cell may take to end before its worker is terminated.
STOP_GRACE_SECONDS = 1.5
