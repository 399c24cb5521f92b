// The data that crosses from Python to the page and its workers, and back, typed once as JSDoc.
// The Python side of KernelConfig and StepData is promptdojo/web/contract.py, of RunResult
// promptdojo/kernel.py (CellResult.to_dict) with the fields the JS layers add, of ControlSpec
// promptdojo/ui.py, of CourseConfig promptdojo/web/offline.py, and of CheckJob, CheckOutput and
// CheckGlobals promptdojo/checking/backends/pyodide.py and pyodide_step.py. tests/web/
// test_contract.py and tests/checking/test_node_contract.py fail when two sides name different
// keys.
// The messages are written down where they are sent: between page and kernel worker in
// protocol.js (TO_WORKER, FROM_WORKER); between a kernel worker and its download worker in
// kernel/downloads.js (JOBS, by name); between page and service worker in offline-rules.js
// (SW_MESSAGES); between the Node check and its thread in promptdojo/pyodide/node/check.mjs.
//
// A reader names a type as `@param {import("../shared/contract.js").KernelConfig} config`.

/**
 * The kernel config: the step page's `promptdojo-kernel` meta element, the same on every step of
 * a lesson. Read by the page (kernel-client.js, status.js, output.js, step.js, nav.js), the
 * kernel worker (worker.js, boot) and the download worker (downloads.js).
 *
 * @typedef {object} KernelConfig
 * @property {string} workerUrl  The kernel worker's script.
 * @property {string} downloadWorkerUrl  The download worker's script.
 * @property {string} zstdUrl  The zstd decoder's module (twins.js loads it when it meets a twin).
 * @property {string} pyodideUrl  Pyodide's folder.
 * @property {string} packagesUrl  The package wheels' folder.
 * @property {string} bundleUrl  The learner bundle (a zip of the promptdojo library).
 * @property {{url: string, sha256: string, size: number, stdlib: string, packages: object | null}
 *   | null} snapshot  The memory snapshot to restore (its size in bytes: the wheels' download
 *   starts once half of it has come, or with it when it holds the packages,
 *   kernel/download-order.js), the standard library Pyodide loads with it
 *   (promptdojo.pyodide.stdlib), and the record of the packages it holds
 *   (kernel/snapshot-packages.js), if any.
 * @property {string[]} packages  The lesson's packages (lesson.yaml).
 * @property {object[]} wheels  The wheels on hand for them, in install order (each with its
 *   compiled archive's `{url, file_name, sha256, size}` where there is one).
 * @property {Object<string, string[]>} twins  A file's URL → [its compressed twin's URL, coding].
 * @property {string[]} earlyFiles  The boot's first big downloads, as the workers ask for them: the
 *   service worker fetches them while a first visit's page reloads (templates/_isolation.js).
 * @property {Object<string, string[]>} imports  What each step's cells import, by step.
 * @property {string} lesson  The lesson's id.
 * @property {number} timeLimit  Seconds a cell may run, unless it says otherwise.
 * @property {number} stopGraceMs  How long Python has to take an interrupt (stopper.js).
 * @property {number} stopWindDownMs  How long a cell that took it has to end (stopper.js).
 * @property {number} bootPatienceMs  How long a boot may take before the page says what it waits for.
 * @property {number} outputCap  Characters of output one cell shows.
 * @property {number} maxControlValues  How many control values one run may carry.
 * @property {number} maxControlText  How long a control's name or text value may be.
 * @property {string[]} outputOrder  Which of a value's representations shows: the first it has.
 * @property {string} figureMime  The type of a picture's words (its alt text and table).
 * @property {string} htmlFrameHead  What an HTML value's sandboxed frame starts with.
 */

/**
 * One step's data: the step page's `#step-data`, read by app.js and step.js.
 *
 * @typedef {object} StepData
 * @property {string} lesson  The lesson's id.
 * @property {number} step  The step's number.
 * @property {{id: string, code: string}[]} setup  Hidden code run before the step's cells.
 * @property {Object<string, string>} checks  Each exercise's hidden check, by exercise id.
 * @property {Object<string, number>} timeLimits  Each cell's time limit in seconds.
 * @property {Object<string, ControlSpec[]>} controls  The controls each cell declares literally.
 * @property {boolean} runEarlier  Whether a run first runs the earlier cells not yet run.
 * @property {Object<string, string[]>} needs  Of those, the ids each cell's run needs while the
 *   cells are as written (promptdojo.course.needs).
 * @property {Object<string, {cell: string, step: number, title: string}>} definitions  Where each
 *   name is first bound: its cell, and that cell's step.
 */

/**
 * A control a cell declares (promptdojo.ui): drawn before the cell first runs, and again from
 * each run's `controls` (controls.js).
 *
 * @typedef {object} ControlSpec
 * @property {"slider" | "choice" | "toggle"} kind
 * @property {string} name
 * @property {number | string | boolean} default
 * @property {number | string | boolean} [value]  The value the run used (its default before it ran).
 * @property {number} [min]  A slider's range and step.
 * @property {number} [max]
 * @property {number} [step]
 * @property {boolean} [integer]  A slider of whole numbers.
 * @property {Array<number | string>} [values]  A slider over listed values, in their order.
 * @property {Array<number | string | boolean>} [choices]  A choice's options.
 */

/**
 * A run's result, as the page's caller gets it. Python makes the first seven fields
 * (promptdojo.kernel CellResult.to_dict); each later one is added by one layer on the way:
 *
 * @typedef {object} RunResult
 * @property {boolean} ok
 * @property {Object<string, string>} value  The last expression's representations, by type.
 * @property {string | null} error_type
 * @property {string | null} error_message
 * @property {string | null} traceback
 * @property {number | null} [error_line]
 * @property {ControlSpec[]} [controls]  The controls the run declared, with their values.
 * @property {number} [ms]  Time inside Python (the kernel worker, worker.js).
 * @property {string} [stopped]  Why a Stop ended it (the kernel client, kernel-client.js).
 * @property {{cellId: string, text: string}[]} [setupFailures]  The step's failed setup (session.js).
 * @property {boolean} [notStarted]  Stopped while its setup ran, so never sent (session.js).
 * @property {boolean} [expected]  It raised what the cell expects (`raises=`; step.js).
 */

/**
 * A kernel worker's request to its download worker (kernel/downloads.js, download-worker.js): one
 * job of `JOBS` by name ("snapshot", "wheels", "bundle"), with the page's kernel config.
 *
 * @typedef {object} DownloadJob
 * @property {string} name
 * @property {KernelConfig} config
 */

/**
 * What a download worker says back: first `started` (the job's name, the moment the job reaches
 * it), then `progress` while the job moves on (the bytes its downloads have read so far, at most
 * once a second): a worker silent for `DOWNLOAD_WORKER_SILENT_MS` once it has been given its job
 * has the job done in the kernel worker; at last one of `value` (the job's result, its buffers
 * moved, not copied), `error` (why it failed: the boot reports it and falls back) or `retry`
 * (the result could not be moved: the kernel worker downloads it itself), with the job's
 * `name`; or, unasked, `entries` (its resource
 * timings, `[url, transferSize]`, for the page's byte count), `note` (a compressed copy it
 * could not use) or `event` (its progress, kernel/download-order.js: "halfway", half the
 * snapshot has come; "nearlyDone", nearly all the wheels have).
 *
 * @typedef {object} DownloadAnswer
 * @property {string} [started]
 * @property {number} [progress]
 * @property {string} [name]
 * @property {*} [value]
 * @property {string} [error]
 * @property {string} [retry]
 * @property {Array<[string, number]>} [entries]
 * @property {"halfway"|"nearlyDone"} [event]
 * @property {string} [note]
 */

/**
 * What the service worker knows of the course (`self.promptdojoCourse`, the first line of the
 * served sw.js; promptdojo.web.offline.course_config).
 *
 * @typedef {object} CourseConfig
 * @property {string} version  The course's version: a new one replaces the cached course whole.
 * @property {string[]} pages  Its pages' URLs, fetched from the network first.
 * @property {string[]} files  Its files' URLs (content-hashed or versioned), from the cache first.
 * @property {Object<string, string[]>} twins  A file's URL → [its compressed twin's URL, coding].
 * @property {Object<string, string>} headers  The headers the server sends, added where a host did not.
 */

/**
 * The Node check's job for one step (promptdojo/pyodide/node/check.mjs's JOB;
 * promptdojo.checking.backends.pyodide.CheckJob). Paths are the machine's.
 *
 * @typedef {object} CheckJob
 * @property {string} boot  The Node bundle of kernel/boot.js.
 * @property {string} pyodide  Pyodide's folder.
 * @property {string} packageDir  The package cache.
 * @property {string} bundle  The learner bundle's zip.
 * @property {string} source  The promptdojo package, mounted for the judge.
 * @property {string} script  The judge's Python (pyodide_step.py).
 * @property {number} graceMs  The stop rule's periods (stopper.js).
 * @property {number} windDownMs
 * @property {?{path: string, sha256: string, stdlib: string, packages: ?object}} snapshot  The
 *   memory snapshot to restore, the standard library it was made with, and the record of the
 *   packages it holds, if any.
 * @property {string[]} packages  The lesson's packages.
 * @property {object[]} packageWheels  Their wheels, in install order.
 * @property {object} step  The step's cells (promptdojo.checking.serialize).
 * @property {number} time_limit  The lesson's time limit in seconds (read by the judge, in Python).
 * @property {number | null} seed  lesson.yaml's seed.
 * @property {boolean} numpy  Whether numpy is seeded too.
 */

/**
 * What the Node check writes for Python to read (check.mjs's OUT).
 *
 * @typedef {object} CheckOutput
 * @property {object[]} outcomes  Each cell's verdict, in order (promptdojo.checking.outcome).
 * @property {Object<string, string>} missing  Packages the cache lacks, with why: nothing ran.
 * @property {string | null} crashed  Why the step's thread ended early.
 * @property {object | null} boot  The boot's ready phase detail (`snapshotFailed`, ...).
 */

/**
 * The globals through which the judge's Python (pyodide_step.py) and check.mjs's thread talk.
 *
 * @typedef {object} CheckGlobals
 * @property {string} pdJob  The job, as JSON.
 * @property {(seconds: number) => void} pdStart  A cell starts, with its time limit.
 * @property {() => void} pdStop  The cell ended.
 * @property {() => number} pdExpired  1 once the running cell's time limit has passed.
 * @property {(outcome: string) => void} pdOutcome  A cell's verdict, as JSON.
 */

export {};
