// The order in which the boot's big downloads end, on a slow link.
//
// Downloads that share a link from the start end smallest first: the snapshot (the largest) came
// last, and everything after it (the restore, numpy's install and import, the learner library's
// imports, the warm-up) waited for the last byte. Each file is needed at a different point of the
// boot, so they are started in turns, each while the one before still downloads (the link stays
// full), to end in the order the boot needs them:
// - the snapshot first: the restore runs while the rest arrives;
// - the wheels next, started once half the snapshot has come: numpy is installed and imported
//   while the learner bundle arrives;
// - the learner bundle last, started once nine tenths of the wheels have come: it is needed only
//   for the learner library's own imports, the last step before "ready" (boot.js).
// A snapshot that holds the packages (snapshot-packages.js) is restored only once their libraries
// are compiled: its wheels start with it, end first (they are smaller), and compile while the
// rest of the snapshot comes.
// On a fast link, or from the offline copy, each share comes at once and the order costs nothing.

/** The share of the snapshot's bytes that has come when the wheels' download starts. */
export const WHEELS_AFTER_SNAPSHOT = 0.5;
/** The same, for a snapshot that holds the packages. */
export const WHEELS_WITH_PACKAGED_SNAPSHOT = 0;
/** The share of the wheels' bytes that has come when the learner bundle's download starts. */
export const BUNDLE_AFTER_WHEELS = 0.9;

/**
 * A signal that opens once: `{opened, open}`, `opened` a promise that resolves when `open()` is
 * first called.
 */
export function signal() {
  let open = () => {};
  const opened = new Promise((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * An `onBytes(bytes so far)` that calls `then()` once `share` of `size` bytes have come; with no
 * size (0 or missing), `then()` is called at once: there is nothing to wait for.
 */
export function whenShare(size, share, then) {
  let pending = then;
  const onBytes = (received) => {
    if (!pending || received < size * share) return;
    const call = pending;
    pending = null;
    call();
  };
  if (!(size > 0)) onBytes(Infinity);
  return onBytes;
}

/** `response`, with `onBytes(bytes so far)` called as each piece of its body is read. */
export function counted(response, onBytes) {
  if (!response.ok || !response.body) return response;
  let received = 0;
  const counter = new TransformStream({
    transform(piece, stream) {
      received += piece.byteLength;
      onBytes(received);
      stream.enqueue(piece);
    },
  });
  const { status, statusText, headers } = response;
  return new Response(response.body.pipeThrough(counter), { status, statusText, headers });
}

/** A `get` for `fetchBytes` (downloads.js) whose responses are `counted`. */
export function countedGet(onBytes) {
  return (href) => fetch(href).then((response) => counted(response, onBytes));
}
