// How long the boot waits for what has stopped moving: a download worker that says nothing
// (downloads.js), a request whose answer never comes (`within`, `ANSWER_MS`), a response whose
// body stalls (`bodyBytes`). Browsers give up on none of them: a stalled download held the boot
// for ever. Each wait allows for a thread that was busy.

/** How late a silence watch's timer must fire to be taken for a sign of a busy thread. */
const LATE_MS = 200;

/**
 * Call `onSilent()` after `ms`, unless the function returned is called first. This thread may be
 * busy for seconds (restoring the snapshot, importing numpy), and a message may then wait in its
 * queue behind the late timer: a timer that fires `LATE_MS` late or more gives the queue one more
 * second first (once: on a machine so busy that every timer fires late, the wait still ends).
 */
export function afterSilence(ms, onSilent) {
  let timer;
  const wait = (ms, last) => {
    const due = Date.now() + ms;
    const late = () => Date.now() - due >= LATE_MS;
    timer = setTimeout(() => (!last && late() ? wait(1000, true) : onSilent()), ms);
  };
  wait(ms, false);
  return () => clearTimeout(timer);
}

/**
 * How long a response's body may go without a byte before its download counts as broken off,
 * once its answer has come.
 */
export const STALLED_MS = 15_000;
/**
 * How long a request may wait for its answer (its headers and first bytes) before its download
 * counts as broken off: longer, since on a slow link a request may wait its turn for a
 * connection behind the boot's other downloads.
 */
export const ANSWER_MS = 60_000;

/**
 * `promise`, or a rejection with `why` if it has not settled after `ms` (`afterSilence`); what
 * it gives later goes to `late` (a response whose body is no longer wanted, say).
 */
export function within(promise, ms, why, late = () => {}) {
  let waited = false;
  return new Promise((resolve, reject) => {
    const stop = afterSilence(ms, () => {
      waited = true;
      reject(new Error(why));
    });
    promise.then(
      (value) => (waited ? late(value) : (stop(), resolve(value))),
      (error) => (stop(), reject(error)),
    );
  });
}

/** Cancel the body of a response that came too late to be read. */
export function dropLate(response) {
  response?.body?.cancel?.().catch(() => {});
}

/**
 * `response`'s body, read to its end; rejects if it breaks off, or if no byte of it comes for
 * `STALLED_MS` (its stream is then cancelled, which ends its request).
 */
export async function bodyBytes(response) {
  if (!response.body) return response.arrayBuffer();
  const reader = response.body.getReader();
  const pieces = [];
  const stalled = `no bytes came for ${STALLED_MS / 1000} s`;
  try {
    for (;;) {
      const { value, done } = await within(reader.read(), STALLED_MS, stalled);
      if (done) break;
      pieces.push(value);
    }
  } catch (error) {
    reader.cancel(error).catch(() => {});
    throw error;
  }
  const bytes = new Uint8Array(pieces.reduce((size, piece) => size + piece.byteLength, 0));
  let at = 0;
  for (const piece of pieces) {
    bytes.set(piece, at);
    at += piece.byteLength;
  }
  return bytes.buffer;
}
