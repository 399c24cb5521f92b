// A kernel client for the session's tests, with the front door page/kernel-client.js gives the
// session (kernel-client.test.mjs tests the real one against a fake Worker): runs are recorded
// and answered at once, or held until `release()`.
export class FakeKernel {
  constructor() {
    this.runs = [];
    this.restartListeners = [];
    this.readyListeners = [];
    this.pending = [];
    this.hold = false;
    this.ready = false;
    this.canInterrupt = true;
    /** What `stop(why)` and `stopCell(cellId, why)` were asked, in order: `[why, cellId?]`. */
    this.stopped = [];
    /** The learner's runs in the kernel, by cell id (what `stopCell` and `hasLearnerRun` see). */
    this.learnerRuns = new Set();
  }

  /** The result of running `code`: `raise…` fails. */
  answer(code) {
    return { ok: !code.startsWith("raise"), value: {} };
  }

  run(code, { key, cellId, internal = false }) {
    this.runs.push({ code, key, cellId, internal });
    const result = this.answer(code);
    if (!this.hold) return Promise.resolve(result);
    return new Promise((resolve) => this.pending.push(() => resolve(result)));
  }

  release() {
    this.hold = false;
    for (const resolve of this.pending.splice(0)) resolve();
  }

  hasLearnerRun() {
    return this.learnerRuns.size > 0;
  }

  stop(why) {
    this.stopped.push([why]);
  }

  stopCell(cellId, why) {
    if (!this.learnerRuns.has(cellId)) return false;
    this.stopped.push([why, cellId]);
    return true;
  }

  onReady(listener) {
    this.readyListeners.push(listener);
    if (this.ready) listener();
  }

  /** Python says "ready". */
  becomeReady() {
    this.ready = true;
    for (const listener of this.readyListeners) listener();
  }

  addRestartListener(listener) {
    this.restartListeners.push(listener);
  }

  restart(reason) {
    this.ready = false;
    for (const listener of this.restartListeners) listener(reason);
  }
}
