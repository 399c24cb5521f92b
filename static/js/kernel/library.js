// The learner library (the promptdojo package, as the learner bundle's zip) inside Pyodide: where
// it goes, and how it is put there, for a cold boot and for the snapshot alike.
import { writeArchive } from "./wheels.js";

/** Where the learner bundle is unpacked inside Pyodide's file system. */
export const LIBRARY_DIR = "/home/pyodide/promptdojo-lib";

/** Write the unzipped learner bundle (`unzipArchive`) and put its folder first on `sys.path`. */
export function installLibrary(pyodide, library) {
  writeArchive(pyodide.FS, LIBRARY_DIR, library);
  const sys = pyodide.pyimport("sys");
  sys.path.insert(0, LIBRARY_DIR);
  sys.destroy?.();
}
