// SHA-256 checks of downloaded bytes (the memory snapshot, package wheels) with Web Crypto, which
// both the browser's worker and Node provide.

/** The SHA-256 of `data` in hex, or null where Web Crypto's digest is missing (plain HTTP). */
export async function sha256Hex(data) {
  if (!globalThis.crypto?.subtle) return null;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * `bytes` as a Uint8Array if their SHA-256 is `sha256` (hex); else throws "<what> is damaged: …".
 * Without Web Crypto the bytes pass unchecked: what consumes them is then the check.
 */
export async function checkedBytes(bytes, sha256, what) {
  const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const hex = await sha256Hex(data);
  if (hex !== null && hex !== sha256) {
    const expected = sha256.slice(0, 12);
    throw new Error(`${what} is damaged: its SHA-256 is ${hex.slice(0, 12)}…, not ${expected}…`);
  }
  return data;
}
