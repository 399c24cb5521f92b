// The page's kernel session: one per page, across in-place navigation between steps.
//
// It owns what the worker's state means to the page. The worker keeps one Python namespace per
// step, so each step's hidden setup cells run once per worker; the cells that ran without error
// are replayed into a fresh worker after a crash; "Restart Python" starts every step afresh; and
// a Stop pressed before a run reaches the kernel (its setup still running) stops that run.

import { neverRan } from "../shared/protocol.js";

/** What the session knows of one step's namespace in the current worker. */
class StepState {
  constructor() {
    /** The promise of the step's setup cells (or of a replay), once started. */
    this.setupDone = null;
    /** `{id, code, controls}` of the cells that ran without error, in order: replayed after a crash. */
    this.succeeded = [];
    /** The learner's cells that ran to an end (with or without an error) in this worker. */
    this.ran = new Set();
  }
}

export class KernelSession {
  /**
   * @param {import("./kernel-client.js").KernelClient} kernel  Used through its front door only:
   *   `run`, `stop`, `stopCell`, `hasLearnerRun`, `canInterrupt`, `onReady`, `restart` and
   *   `addRestartListener`.
   */
  constructor(kernel) {
    this.kernel = kernel;
    this.states = new Map();
    this.currentKey = null;
    /** The current step's hidden setup cells, `[{id, code}]`. */
    this.currentSetup = [];
    this.note = "";
    this.freshRestart = false;
    /** The learner's runs waiting for their step's setup, `{cellId, why}`: a Stop marks them. */
    this.waiters = new Set();
    this.stopsAsked = 0;
    this.wasReady = false;
    kernel.onReady(() => {
      this.wasReady = true;
    });
    kernel.addRestartListener((reason) => this.replay(reason));
  }

  /**
   * True once Python has been ready on this page. From then on a run is taken at any time: while
   * a replaced worker boots, it waits in that worker's queue (the kernel's own `ready` says
   * whether this worker is).
   */
  get runnable() {
    return this.wasReady;
  }

  /** Call `listener()` each time Python is ready (now, if it is). */
  onReady(listener) {
    this.kernel.onReady(listener);
  }

  /** Said in a cell's status when its run ended because the worker was replaced. */
  get restartNote() {
    return this.note;
  }

  /** How many times the learner asked to stop: a Run or Check waiting its turn since is dropped. */
  stopCount() {
    return this.stopsAsked;
  }

  stateOf(key) {
    if (!this.states.has(key)) this.states.set(key, new StepState());
    return this.states.get(key);
  }

  /** The step `key` is on the page now; its setup cells are `setup`. Returns its runner. */
  enter(key, setup = []) {
    this.currentKey = key;
    this.currentSetup = setup;
    return new StepSession(this, key, setup);
  }

  /**
   * Wait for `setup` before the learner's run of `cellId`. Resolves with why a Stop asked for
   * meanwhile stopped that run before it started, or null.
   */
  async waitForSetup(setup, cellId) {
    const waiter = { cellId, why: null };
    this.waiters.add(waiter);
    try {
      await setup;
    } finally {
      this.waiters.delete(waiter);
    }
    return waiter.why;
  }

  /** Stop the learner's running cell; those still waiting for their setup stop when it ends. */
  requestStop(why = "you pressed Stop") {
    this.stopsAsked += 1;
    if (this.kernel.hasLearnerRun()) this.kernel.stop(why);
    else for (const waiter of this.waiters) waiter.why = why;
  }

  /**
   * Interrupt the learner's run of cell `cellId` (running, queued, or waiting for its setup), if
   * Python can take an interrupt; without one (no shared memory) stopping means replacing the
   * worker, so the run is left to finish. Returns true when a stop was asked for.
   */
  interruptCell(cellId, why) {
    if (!this.kernel.canInterrupt) return false;
    if (!this.kernel.stopCell(cellId, why)) {
      for (const waiter of this.waiters) if (waiter.cellId === cellId) waiter.why = why;
    }
    return true;
  }

  /** "Restart Python": a fresh worker, nothing replayed, every step starts afresh. */
  restart() {
    this.freshRestart = true;
    this.kernel.restart("you restarted it");
  }

  /**
   * After the worker was replaced: forget every step but the current one and replay that one's
   * setup and successful cells, unless the learner asked for a clean slate.
   */
  replay(reason) {
    if (this.freshRestart) {
      this.freshRestart = false;
      this.states.clear();
      this.note = "Python was restarted: every step starts fresh.";
      return;
    }
    for (const key of [...this.states.keys()]) {
      if (key !== this.currentKey) this.states.delete(key);
    }
    if (this.currentKey === null) return;
    const key = this.currentKey;
    const state = this.stateOf(key);
    const cells = [...this.currentSetup, ...state.succeeded];
    state.ran = new Set(state.succeeded.map((cell) => cell.id));
    this.note = `Python was restarted (${reason}); replayed ${state.succeeded.length} earlier cell(s).`;
    state.setupDone = (async () => {
      for (const cell of cells) {
        await this.kernel.run(cell.code, {
          key,
          cellId: cell.id,
          internal: true,
          controls: cell.controls,
        });
      }
    })();
  }
}

/** What a learner's cell shows about a setup cell that failed: which one, and its cause. */
export function setupFailure(cellId, result) {
  const cause = result.traceback || `${result.error_type}: ${result.error_message}`;
  return {
    cellId,
    text: `This step's setup (hidden cell “${cellId}”) failed, so the names it defines are missing:\n${cause}`,
  };
}

/** One step's side of the session: its setup, then its cells, in its own namespace. */
class StepSession {
  constructor(session, key, setup) {
    this.session = session;
    this.key = key;
    this.setup = setup;
  }

  /** Run the step's setup cells, once per worker. */
  ensureSetup() {
    const state = this.session.stateOf(this.key);
    state.setupDone ??= (async () => {
      state.setupFailures = [];
      for (const cell of this.setup) {
        const result = await this.session.kernel.run(cell.code, {
          key: this.key,
          cellId: cell.id,
          internal: true,
        });
        if (!result.ok) {
          console.error(`setup cell ${cell.id} failed`, result.traceback);
          state.setupFailures.push(setupFailure(cell.id, result));
        }
      }
    })();
    return state.setupDone;
  }

  /**
   * Run a learner's cell after the setup. Resolves with the kernel's result, or with
   * `{ok: false, stopped, notStarted: true}` when Stop came while the setup ran.
   */
  async runCell(cellId, code, { onStream, timeLimit, controls }) {
    const { session } = this;
    const stopped = await session.waitForSetup(this.ensureSetup(), cellId);
    if (stopped) return { ok: false, stopped, notStarted: true };
    const run = { key: this.key, cellId, onStream, timeLimit, controls };
    const result = await session.kernel.run(code, run);
    const state = session.stateOf(this.key);
    if (result.ok) state.succeeded.push({ id: cellId, code, controls });
    if (!result.stopped && !neverRan(result)) state.ran.add(cellId);
    // A failed setup explains what follows (a NameError for what it should have defined).
    if (state.setupFailures?.length) return { ...result, setupFailures: state.setupFailures };
    return result;
  }

  /** Whether the learner's cell `cellId` ran to an end in this worker (static/js/page/order.js). */
  hasRun(cellId) {
    return this.session.stateOf(this.key).ran.has(cellId);
  }

  /** Run an exercise's hidden check after its cell passed. */
  runCheck(cellId, code) {
    return this.session.kernel.run(code, { key: this.key, cellId: `${cellId}-check` });
  }
}
