// Starting the interpreter: restored from a memory snapshot, or booted from scratch when there is
// none or anything about it fails (boot.js goes on from either).
import { bootMark } from "../shared/protocol.js";
import { installLibrary } from "./library.js";
import {
  catchModule,
  checkedRecord,
  loadLibrariesEarly,
  reopenLibraries,
} from "./snapshot-packages.js";
import { writeWheels } from "./wheels.js";

/**
 * Run in a restored interpreter before anything else. `random`, if the snapshot imported it,
 * holds the generator state of the build, and so does numpy's global generator: each is seeded
 * again from the browser's `crypto`, as a cold boot would seed it. The file system is not part
 * of a memory snapshot: the learner bundle is written again later (`writeLibrary`); its modules
 * already imported stay imported, and `sys.path` already holds its folder.
 */
const AFTER_RESTORE = `
import sys
if "random" in sys.modules:
    sys.modules["random"].seed()
if "numpy.random" in sys.modules:
    sys.modules["numpy.random"].seed()
import promptdojo.kernel
`;

/**
 * Restore `snapshot` (bytes, or a promise of them) and make it ready as a cold boot would be,
 * but for the learner bundle's files (`writeLibrary`). Pyodide awaits the promise itself, after
 * it has started fetching its lock file and loader. A snapshot that holds packages (`packaged`:
 * `{record, prepared}`, the snapshot's record and a promise of the prepared wheels, or null) has
 * their libraries loaded before the restore, and their files written after it
 * (snapshot-packages.js). If they cannot be had, are not the snapshot's, do not load or sit
 * elsewhere, it throws why, and nothing ran in the restored memory.
 */
async function restore(loadPyodide, config, snapshot, packaged) {
  const record = packaged && checkedRecord(packaged.record);
  if (packaged && !packaged.prepared) {
    throw new Error("the snapshot holds packages this page has no wheels for");
  }
  const caught = packaged && catchModule();
  const early =
    packaged && loadLibrariesEarly(packaged.prepared, record.folder, record, caught, snapshot);
  let pyodide;
  try {
    const options = early ? { fsInit: early.fsInit } : {};
    pyodide = await loadPyodide({ ...config, ...options, _loadSnapshot: snapshot });
  } catch (error) {
    throw early?.failure() ?? error; // the libraries' failure stopped the restore
  }
  bootMark("restored");
  if (packaged) {
    reopenLibraries(pyodide, record);
    writeWheels(pyodide, await packaged.prepared);
  }
  pyodide.runPython(AFTER_RESTORE);
  bootMark("after-restore");
  return pyodide;
}

/** What restoring a snapshot that holds packages needs, or null (see `restore`). */
export function packagedSnapshot(record, prepared) {
  return record ? { record, prepared } : null;
}

/** Boot an interpreter from scratch and install the learner bundle. */
async function coldBoot(loadPyodide, config, library) {
  const pyodide = await loadPyodide(config);
  installLibrary(pyodide, await library);
  return pyodide;
}

/**
 * Start Python with `config`: from `snapshot` (with the packages it holds, `packaged`), else, or
 * when that fails (`onFailed(why)` hears why), from scratch with the learner bundle
 * (`library`, a promise of it unzipped). Returns `{pyodide, restored, snapshotFailed, inSnapshot,
 * heldImports}`: the packages the snapshot brought back, and the modules it had imported.
 */
export async function startPython(options) {
  const { loadPyodide, config, snapshot, packaged, library, onFailed } = options;
  let [pyodide, snapshotFailed] = [null, null];
  if (snapshot) {
    try {
      pyodide = await restore(loadPyodide, config, snapshot, packaged);
    } catch (error) {
      const why = String(error?.message ?? error).trim().split("\n").at(-1);
      snapshotFailed = why.startsWith("the snapshot")
        ? why
        : `the snapshot did not restore (${why})`;
      onFailed(snapshotFailed);
    }
  }
  const restored = Boolean(pyodide);
  const inSnapshot = restored && packaged ? packaged.record.packages : [];
  const heldImports = inSnapshot.length ? packaged.record.imports : [];
  pyodide ??= await coldBoot(loadPyodide, config, library);
  return { pyodide, restored, snapshotFailed, inSnapshot, heldImports };
}
