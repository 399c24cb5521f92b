// The learner library (the promptdojo package, as the learner bundle's zip) inside Pyodide: where
// it goes, and how it is put there, for a cold boot and for the snapshot alike.
import { bootMark } from "../shared/protocol.js";
import { writeArchive } from "./wheels.js";

/** The learner library's package: the learner bundle holds it, and nothing else. */
export const LIBRARY_PACKAGE = "promptdojo";

/** Where the learner bundle is unpacked inside Pyodide's file system. */
export const LIBRARY_DIR = "/home/pyodide/promptdojo-lib";

/** Write the unzipped learner bundle (`unzipArchive`) and put its folder first on `sys.path`. */
export function installLibrary(pyodide, library) {
  writeArchive(pyodide.FS, LIBRARY_DIR, library);
  const sys = pyodide.pyimport("sys");
  sys.path.insert(0, LIBRARY_DIR);
  sys.destroy?.();
}

/**
 * Write the learner bundle (a promise of it, unzipped) into a restored interpreter. Its files are
 * needed only by the library's modules the snapshot did not import (and the files they read):
 * the bundle comes last (download-order.js), while numpy installs and imports.
 */
export async function writeLibrary(pyodide, library) {
  writeArchive(pyodide.FS, LIBRARY_DIR, await library);
  bootMark("library-written");
}

/** Whether module `name` belongs to the learner library. */
export function inLibrary(name) {
  return name === LIBRARY_PACKAGE || name.startsWith(`${LIBRARY_PACKAGE}.`);
}
