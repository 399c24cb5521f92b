// The one stop rule, for the page's kernel client (page/kernel-client.js) and for the Node check
// (promptdojo/pyodide/node/check.mjs, through the Node bundle of kernel/boot.js, which re-exports
// it). The two periods are Python's (promptdojo.pyodide.limits), passed in milliseconds.
//
// 1. Write SIGINT into the interrupt buffer: Python raises KeyboardInterrupt in the cell at its
//    next check, and clears the buffer as it takes the signal.
// 2. `graceMs` later, if the cell has not ended (the caller cancels the rule when it ends):
//    - the buffer still holds SIGINT: Python is stuck outside its interpreter loop and never
//      took it; give up ("not-taken");
//    - the buffer is clear: Python took it and is winding down (`finally` blocks, a traceback, a
//      result already on its way on a busy machine); give it `windDownMs` more, then give up
//      ("wound-down").
// Without a buffer (no shared memory on this page) no interrupt can be sent: give up at once,
// on the next turn of the event loop ("no-interrupt"). Giving up is the caller's: the page
// replaces the worker, the check terminates it and reports the cell.

/** The value written into the interrupt buffer: Python raises KeyboardInterrupt. */
export const SIGINT = 2;

/** Why the rule gave up on a cell. */
export const GAVE_UP = Object.freeze({
  NO_INTERRUPT: "no-interrupt",
  NOT_TAKEN: "not-taken",
  WOUND_DOWN: "wound-down",
});

/**
 * Start stopping a running cell; returns `cancel()`, to call when the cell ends (after it, the
 * rule gives up on nothing).
 *
 * @param {object} options
 * @param {Int32Array | null} options.buffer  The interrupt buffer Python watches (its slot 0).
 * @param {number} options.graceMs  How long Python has to take the interrupt.
 * @param {number} options.windDownMs  How long a cell that took it has to end.
 * @param {(why: string) => void} options.giveUp  Called once, with a `GAVE_UP` value.
 * @returns {() => void}
 */
export function escalateStop({ buffer, graceMs, windDownMs, giveUp }) {
  let timer = null;
  const after = (ms, then) => {
    timer = setTimeout(then, ms);
  };
  if (!buffer) {
    after(0, () => giveUp(GAVE_UP.NO_INTERRUPT));
  } else {
    Atomics.store(buffer, 0, SIGINT);
    after(graceMs, () => {
      if (Atomics.load(buffer, 0) !== 0) giveUp(GAVE_UP.NOT_TAKEN);
      else after(windDownMs, () => giveUp(GAVE_UP.WOUND_DOWN));
    });
  }
  return () => clearTimeout(timer);
}
