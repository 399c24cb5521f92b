// What the boot needs from the browser, detected rather than assumed. Cross-origin isolation is
// not shared memory: WebKitGTK as shipped (and some embedded browsers) isolate the page but give
// it no SharedArrayBuffer. Without it, Stop replaces the worker and replays the step, as on a
// page without isolation. templates/_isolation.js repeats the test inline (it runs before any
// module can load).

/** Why this page has no shared memory for the interrupt buffer, or null when it has. */
export function noSharedMemory(scope = globalThis) {
  if (!scope.crossOriginIsolated) return "this page is not cross-origin isolated";
  if (typeof scope.SharedArrayBuffer !== "function") {
    return "this browser gives the page no shared memory (SharedArrayBuffer)";
  }
  return null;
}

/** The interrupt buffer Python polls (an Int32Array on shared memory), or null without it. */
export function interruptBuffer(scope = globalThis) {
  return noSharedMemory(scope) ? null : new Int32Array(new scope.SharedArrayBuffer(4));
}
