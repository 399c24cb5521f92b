// The page's side of the kernel: starts the worker, queues runs, routes output to callers.

export class KernelClient {
  /** @param {object} config  The `data-kernel` object rendered by the server. */
  constructor(config) {
    this.config = config;
    this.phases = [];
    this.listeners = [];
    this.onPhase = (phase, detail = {}) => {
      this.phases.push([phase, detail]);
      for (const listener of this.listeners) listener(phase, detail);
    };
    this.runs = new Map();
    this.nextId = 1;
    this.worker = new Worker(config.workerUrl, { type: "module", name: "promptdojo-kernel" });
    this.worker.onmessage = (event) => this.receive(event.data);
    this.worker.onerror = (event) => {
      event.preventDefault?.();
      this.onPhase("error", { message: event.message || "the kernel worker failed to start" });
    };
    this.worker.postMessage({ type: "init", config });
  }

  /** Call `listener(phase, detail)` for every boot phase, including those already past. */
  addPhaseListener(listener) {
    for (const [phase, detail] of this.phases) listener(phase, detail);
    this.listeners.push(listener);
  }

  receive(message) {
    if (message.type === "phase") {
      this.onPhase(message.phase, message.detail);
    } else if (message.type === "fatal") {
      this.onPhase("error", { message: message.message });
    } else if (message.type === "stream") {
      this.runs.get(message.id)?.onStream(message.name, message.text);
    } else if (message.type === "result") {
      const run = this.runs.get(message.id);
      this.runs.delete(message.id);
      run?.resolve(message.result);
    }
  }

  /**
   * Run a cell. `onStream(name, text)` receives stdout/stderr as it arrives; the promise resolves
   * with the kernel's result object.
   */
  run(code, { key, cellId, onStream = () => {} }) {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.runs.set(id, { resolve, onStream });
      this.worker.postMessage({ type: "run", id, code, key, cellId });
    });
  }
}
