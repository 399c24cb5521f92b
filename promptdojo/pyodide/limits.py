"""How a runaway cell is stopped in Pyodide, wherever it runs: the page's worker or the Node check.

First SIGINT goes into the interrupt buffer (Python raises ``KeyboardInterrupt`` in the cell).
Python clears the buffer the moment it takes the interrupt, so :data:`STOP_GRACE_SECONDS` later
the buffer tells the two cases apart:

* still set: Python is stuck outside its interpreter loop (in C code, say) and the worker is
  terminated at once;
* cleared: the cell is winding down (its ``except``/``finally`` blocks, the traceback being
  written up, a result message on its way) and gets :data:`STOP_WIND_DOWN_SECONDS` more before
  the worker is terminated.

Deciding by the buffer, not by the clock alone, is what keeps a busy machine from turning an
interrupt that worked into a restart. The page gets these numbers through the kernel config,
the Node check through its job.
"""

#: Seconds Python has to take the interrupt before its worker is terminated.
STOP_GRACE_SECONDS = 1.5

#: Seconds more for a cell that took the interrupt to end (it is still answering Python).
STOP_WIND_DOWN_SECONDS = 5.0

#: Seconds a page waits for Python to be ready before its status line says what the boot is still
#: waiting for (a cold boot on a slow machine takes well under half of it).
BOOT_PATIENCE_SECONDS = 60.0
