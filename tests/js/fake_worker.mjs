// A kernel worker for the kernel client's tests (page/kernel-client.js): it records what the page
// posts and answers only when the test speaks for it (`say`), so one that is never spoken for is
// a worker that stays silent. `FakeWorker.made` lists every one started, oldest first.
import { TO_WORKER } from "../../static/js/shared/protocol.js";

export class FakeWorker {
  static made = [];
  constructor(url, options) {
    this.url = url;
    this.options = options;
    this.messages = [];
    this.terminated = false;
    FakeWorker.made.push(this);
  }
  postMessage(message) {
    this.messages.push(message);
  }
  terminate() {
    this.terminated = true;
  }
  /** A message from this worker to the page. */
  say(message) {
    this.onmessage({ data: message, timeStamp: 0 });
  }
  /** The ids of the runs posted to it. */
  runs() {
    return this.messages.filter((m) => m.type === TO_WORKER.RUN).map((m) => m.id);
  }
}

/** The kernel config the tests give the client: its time limit and stop periods. */
export const CONFIG = { workerUrl: "worker.js", timeLimit: 30, stopGraceMs: 1500, stopWindDownMs: 5000 };

/** Save the globals `names` as they are; the function returned puts them back. */
export function savedGlobals(names) {
  const saved = Object.fromEntries(names.map((n) => [n, Object.getOwnPropertyDescriptor(globalThis, n)]));
  return () => {
    for (const [name, descriptor] of Object.entries(saved)) {
      if (descriptor) Object.defineProperty(globalThis, name, descriptor);
      else delete globalThis[name];
    }
  };
}
