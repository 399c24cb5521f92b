// The download worker's results cross to the kernel worker moved, not copied: every ArrayBuffer
// under a result, once each (a buffer listed twice would make postMessage throw).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import test, { mock } from "node:test";
import { strToU8, zipSync } from "fflate";
import {
  DOWNLOAD_WORKER_SILENT_MS,
  downloadWheel,
  JOBS,
  fetchBytes,
  quietForCompiled,
  startDownloads,
  transferables,
} from "../../static/js/kernel/downloads.js";
import { ANSWER_MS, STALLED_MS } from "../../static/js/kernel/patience.js";
import { WHEELS_AFTER_SNAPSHOT } from "../../static/js/kernel/download-order.js";
import { FakeWorker, savedGlobals } from "./fake_worker.mjs";

// The smallest valid WebAssembly module: its magic and version.
const EMPTY_MODULE = new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]);

test("every buffer under a prepared wheel is listed once, and compiled modules are left alone", () => {
  const archive = new ArrayBuffer(64);
  const own = new Uint8Array(8);
  const prepared = [
    {
      name: "numpy",
      files: {
        "a.py": new Uint8Array(archive, 0, 16),
        "b.py": new Uint8Array(archive, 16, 8),
        "c.so": own,
      },
      names: ["a.py", "b.py", "c.so"],
      libraries: [["c.so", new WebAssembly.Module(EMPTY_MODULE)]],
    },
  ];
  const found = transferables(prepared);
  assert.equal(found.length, 2);
  assert.ok(found.includes(archive));
  assert.ok(found.includes(own.buffer));
});

test("a snapshot's bytes are one buffer; nothing to move gives an empty list", () => {
  const snapshot = new Uint8Array(32);
  assert.deepEqual(transferables(snapshot), [snapshot.buffer]);
  assert.deepEqual(transferables(undefined), []);
  assert.deepEqual(transferables({ name: "x", count: 3 }), []);
});

// A wheel with a compiled archive (promptdojo.pyodide.bytecode): the archive is used when it is
// whole, and the wheel itself when the archive cannot be fetched or is damaged.
function zipEntry(name, members, url) {
  const bytes = zipSync(Object.fromEntries(members.map((n) => [n, strToU8(`# ${n}\n`)])));
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { bytes, entry: { url, file_name: url.split("/").at(-1), sha256 } };
}

function withFetch(answers, body) {
  const real = globalThis.fetch;
  const asked = [];
  globalThis.fetch = async (url) => {
    asked.push(String(url));
    const bytes = answers[String(url)];
    return bytes ? new Response(bytes) : new Response("missing", { status: 404 });
  };
  return body(asked).finally(() => (globalThis.fetch = real));
}

const WHEEL_FILES = ["pkg/__init__.py", "pkg-1.0.dist-info/METADATA"];
const plainWheel = zipEntry("pkg", WHEEL_FILES, "http://x/packages/pkg-1.0-py3-none-any.whl");
const compiledWheel = zipEntry(
  "pkg",
  [...WHEEL_FILES, "pkg/__pycache__/__init__.cpython-313.pyc"],
  "http://x/packages/compiled/pkg-1.0-py3-none-any-0123.zip",
);
const config = {
  name: "pkg",
  install_dir: "site",
  ...plainWheel.entry,
  compiled: compiledWheel.entry,
};

test("a wheel's compiled archive is prepared in its place, pycs and all", async () => {
  const answers = { [compiledWheel.entry.url]: compiledWheel.bytes };
  await withFetch(answers, async (asked) => {
    const prepared = await downloadWheel(config);
    assert.equal(prepared.bytecode, true);
    assert.ok(prepared.names.includes("pkg/__pycache__/__init__.cpython-313.pyc"));
    assert.deepEqual(asked, [compiledWheel.entry.url]);
  });
});

test("a compiled archive that is damaged or missing leaves the wheel to be prepared", async () => {
  const damaged = compiledWheel.bytes.slice();
  damaged[damaged.length - 30] ^= 0xff;
  for (const answers of [{ [compiledWheel.entry.url]: damaged }, {}]) {
    answers[plainWheel.entry.url] = plainWheel.bytes;
    await withFetch(answers, async (asked) => {
      const prepared = await downloadWheel(config);
      assert.equal(prepared.bytecode, undefined);
      assert.deepEqual(prepared.names, WHEEL_FILES);
      assert.deepEqual(asked, [compiledWheel.entry.url, plainWheel.entry.url]);
    });
  }
});

test("what a compiled wheel's twin did goes to the console, not to the page", () => {
  const said = [];
  const note = quietForCompiled({ wheels: [config] }, (message) => said.push(message));
  const name = compiledWheel.entry.file_name;
  const warn = console.warn;
  const warned = [];
  console.warn = (message) => warned.push(message);
  try {
    note(`promptdojo: the compressed copy of ${name} was not used (HTTP 404); fetching ${name} itself`);
    note("promptdojo: the compressed copy of pyodide.asm.wasm was not used (HTTP 404)");
  } finally {
    console.warn = warn;
  }
  assert.equal(warned.length, 1);
  assert.ok(warned[0].includes(name));
  assert.deepEqual(said, ["promptdojo: the compressed copy of pyodide.asm.wasm was not used (HTTP 404)"]);
});

// A connection that drops early rejects fetch itself where fetch is wrapped (twins.js reads the
// first bytes before it answers), and later, in arrayBuffer(): either way it is asked for again.
async function withFailingFetch(failures, body) {
  const real = { fetch: globalThis.fetch, warn: console.warn };
  const asked = [];
  const warned = [];
  globalThis.fetch = async (url) => {
    asked.push(String(url));
    const failure = failures.shift();
    if (failure === "fetch") throw new TypeError("network error");
    if (failure === "body") {
      const stream = new ReadableStream({ pull: (c) => c.error(new TypeError("network error")) });
      return new Response(stream);
    }
    return new Response(new Uint8Array([1, 2, 3]));
  };
  console.warn = (message) => warned.push(message);
  try {
    return await body(asked, warned);
  } finally {
    globalThis.fetch = real.fetch;
    console.warn = real.warn;
  }
}

for (const failure of ["fetch", "body"]) {
  test(`a download that breaks off (${failure}) is fetched again, and said once`, async () => {
    await withFailingFetch([failure], async (asked, warned) => {
      const bytes = await fetchBytes("http://x/snapshot/s.bin", "the snapshot");
      assert.deepEqual([...new Uint8Array(bytes)], [1, 2, 3]);
      assert.equal(asked.length, 2);
      assert.deepEqual(warned, ["promptdojo: the snapshot broke off (network error); fetching it again"]);
    });
  });

  test(`a download that breaks off (${failure}) twice fails, naming it`, async () => {
    await withFailingFetch([failure, failure], async (asked) => {
      await assert.rejects(fetchBytes("http://x/snapshot/s.bin", "the snapshot"), {
        message: "the snapshot could not be fetched (network error)",
      });
      assert.equal(asked.length, 2);
    });
  });
}

// A body that stops coming (a stalled connection, which browsers never give up on by themselves)
// counts as broken off once no byte of it has come for STALLED_MS: it is cancelled, and asked
// for again. One that keeps coming, however slowly, is read to its end.
const settle = () => new Promise((resolve) => setImmediate(resolve));

function trickle(pieces, everyMs, cancelled = []) {
  return new ReadableStream({
    pull: (stream) =>
      new Promise((resolve) =>
        setTimeout(() => {
          const piece = pieces.shift();
          if (piece === "stall") return; // never another byte
          if (piece) stream.enqueue(new Uint8Array(piece));
          else stream.close();
          resolve();
        }, everyMs),
      ),
    cancel: (why) => cancelled.push(why?.message),
  });
}

test("a download whose body stalls is cancelled after STALLED_MS and fetched again", async () => {
  const real = { fetch: globalThis.fetch, warn: console.warn };
  const [asked, warned, cancelled] = [[], [], []];
  const bodies = [trickle([[9], "stall"], 0, cancelled), trickle([[1, 2], [3]], 0)];
  globalThis.fetch = async (url) => (asked.push(url), new Response(bodies.shift()));
  console.warn = (message) => warned.push(message);
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  try {
    const bytes = fetchBytes("http://x/snapshot/s.bin", "the snapshot");
    for (let i = 0; i < 3; i += 1) (mock.timers.tick(0), await settle());
    mock.timers.tick(STALLED_MS - 1);
    await settle();
    assert.deepEqual([asked.length, cancelled], [1, []]);
    mock.timers.tick(1);
    for (let i = 0; i < 5; i += 1) (await settle(), mock.timers.tick(0));
    assert.deepEqual([...new Uint8Array(await bytes)], [1, 2, 3]);
    assert.deepEqual(cancelled, ["no bytes came for 15 s"]);
    assert.deepEqual(warned, [
      "promptdojo: the snapshot broke off (no bytes came for 15 s); fetching it again",
    ]);
  } finally {
    mock.timers.reset();
    globalThis.fetch = real.fetch;
    console.warn = real.warn;
  }
});

test("a request with no answer for ANSWER_MS is asked for again, and its late answer dropped", async () => {
  const real = { fetch: globalThis.fetch, warn: console.warn };
  const [warned, cancelled] = [[], []];
  let answerFirst;
  const late = new Promise((resolve) => (answerFirst = resolve));
  const answers = [late, Promise.resolve(new Response(new Uint8Array([4, 5])))];
  globalThis.fetch = () => answers.shift();
  console.warn = (message) => warned.push(message);
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  try {
    const bytes = fetchBytes("http://x/snapshot/python_stdlib.zip", "the standard library");
    await settle();
    mock.timers.tick(ANSWER_MS - 1);
    await settle();
    assert.equal(answers.length, 1); // asked once so far
    mock.timers.tick(1);
    assert.deepEqual([...new Uint8Array(await bytes)], [4, 5]);
    assert.equal(answers.length, 0);
    assert.deepEqual(warned, [
      "promptdojo: the standard library broke off (no answer came for 60 s); fetching it again",
    ]);
    answerFirst(new Response(new ReadableStream({ cancel: () => cancelled.push("first") })));
    await settle();
    assert.deepEqual(cancelled, ["first"]);
  } finally {
    mock.timers.reset();
    globalThis.fetch = real.fetch;
    console.warn = real.warn;
  }
});

test("a download whose body keeps coming, however slowly, is read to its end", async () => {
  const real = globalThis.fetch;
  let asked = 0;
  const body = trickle([[1], [2], [3], [4]], STALLED_MS - 1);
  globalThis.fetch = async () => ((asked += 1), new Response(body));
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  try {
    const bytes = fetchBytes("http://x/snapshot/s.bin", "the snapshot");
    for (let i = 0; i < 5; i += 1) (await settle(), mock.timers.tick(STALLED_MS - 1), await settle());
    assert.deepEqual([...new Uint8Array(await bytes)], [1, 2, 3, 4]);
    assert.equal(asked, 1);
  } finally {
    mock.timers.reset();
    globalThis.fetch = real;
  }
});

test("an error status is not fetched again", async () => {
  const real = globalThis.fetch;
  let asked = 0;
  globalThis.fetch = async () => (asked++, new Response("gone", { status: 404 }));
  try {
    await assert.rejects(fetchBytes("http://x/b.zip", "the learner bundle"), {
      message: "the learner bundle could not be fetched (HTTP 404)",
    });
    assert.equal(asked, 1);
  } finally {
    globalThis.fetch = real;
  }
});

// A download worker that never says a word (WebKit was seen to leave one hanging, and the boot
// then waited for ever), or stops saying that its job moves on, has its job done in the kernel
// worker; one that keeps saying so is left to it, however long the job takes.
async function withDownloadWorkers(body, config = { snapshot: { url: "http://x/s.bin" } }) {
  const restore = savedGlobals(["Worker", "fetch"]);
  const real = console.warn;
  const asked = [];
  const warned = [];
  FakeWorker.made = [];
  globalThis.Worker = FakeWorker;
  globalThis.fetch = async (url) => (asked.push(String(url)), new Response("gone", { status: 404 }));
  console.warn = (message) => warned.push(message);
  mock.timers.enable({ apis: ["setTimeout", "Date"], now: 0 });
  try {
    await body(startDownloads({ downloadWorkerUrl: "download-worker.js", ...config }), asked, warned);
  } finally {
    mock.timers.reset();
    console.warn = real;
    restore();
  }
}

const SNAPSHOT_GONE = { message: "the snapshot could not be fetched (HTTP 404)" };

test("a download worker silent for its whole patience has its job done here, said once", async () => {
  await withDownloadWorkers(async (downloads, asked, warned) => {
    const [helper] = FakeWorker.made;
    assert.deepEqual(helper.messages.map((m) => m.name), ["snapshot"]);
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS - 1);
    assert.equal(downloads.where(), "download worker");
    assert.deepEqual(asked, []);
    mock.timers.tick(1);
    assert.equal(helper.terminated, true);
    assert.equal(downloads.where(), "kernel worker");
    await assert.rejects(downloads.snapshot, SNAPSHOT_GONE); // fetched here: the 404 of this test
    assert.deepEqual(asked, ["http://x/s.bin"]);
    assert.deepEqual(warned, [
      "promptdojo: downloading in the kernel worker: the download worker said nothing for 10 s",
    ]);
  });
});

test("a download worker that says its job moves on keeps it, however long it takes", async () => {
  await withDownloadWorkers(async (downloads, asked, warned) => {
    const [helper] = FakeWorker.made;
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS / 2);
    helper.say({ started: "snapshot" });
    for (let second = 1; second <= 100; second += 1) {
      mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS - 1);
      helper.say({ progress: second === 1 ? 0 : second * 1000 }); // no bytes yet: a step ended
    }
    assert.equal(helper.terminated, false);
    helper.say({ name: "snapshot", value: "restored" });
    assert.equal(await downloads.snapshot, "restored");
    assert.equal(helper.terminated, false);
    assert.equal(downloads.where(), "download worker");
    assert.deepEqual([asked, warned], [[], []]);
  });
});

test("a download worker whose job stops moving has it done here, however far it got", async () => {
  await withDownloadWorkers(async (downloads, asked, warned) => {
    const [helper] = FakeWorker.made;
    helper.say({ started: "snapshot" });
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS / 2);
    helper.say({ progress: 500_000 }); // then the download stalls
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS - 1);
    assert.equal(helper.terminated, false);
    mock.timers.tick(1);
    assert.equal(helper.terminated, true);
    await assert.rejects(downloads.snapshot, SNAPSHOT_GONE); // fetched here: the 404 of this test
    assert.deepEqual(asked, ["http://x/s.bin"]);
    assert.deepEqual(warned, [
      "promptdojo: downloading in the kernel worker: the download worker said nothing for 10 s",
    ]);
    helper.say({ name: "snapshot", value: "too late" }); // a terminated worker's last word
    await assert.rejects(downloads.snapshot, SNAPSHOT_GONE);
  });
});

test("a watch that fires late (this thread was busy) hears a message waiting behind it", async () => {
  await withDownloadWorkers(async (downloads, asked) => {
    const [helper] = FakeWorker.made;
    mock.timers.setTime(DOWNLOAD_WORKER_SILENT_MS + 5000); // a restore held the thread 15 s
    mock.timers.tick(0); // the late timer runs first: it gives the queue another second
    assert.equal(helper.terminated, false);
    helper.say({ started: "snapshot" });
    mock.timers.tick(2000);
    helper.say({ name: "snapshot", value: "restored" });
    assert.equal(await downloads.snapshot, "restored");
    assert.deepEqual(asked, []);
  });
});

test("a watch that fires a fifth of a second late also hears what waits behind it", async () => {
  await withDownloadWorkers(async (downloads) => {
    const [helper] = FakeWorker.made;
    helper.say({ started: "snapshot" });
    mock.timers.setTime(DOWNLOAD_WORKER_SILENT_MS + 200); // numpy's import held the thread
    mock.timers.tick(0);
    assert.equal(helper.terminated, false);
    helper.say({ progress: 1_000_000 }); // it had been waiting in the queue
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS - 1);
    assert.equal(helper.terminated, false);
    helper.say({ name: "snapshot", value: "restored" });
    assert.equal(await downloads.snapshot, "restored");
  });
});

test("a late watch still gives up on a worker that says nothing in the second it adds", async () => {
  await withDownloadWorkers(async (downloads, asked) => {
    const [helper] = FakeWorker.made;
    mock.timers.setTime(DOWNLOAD_WORKER_SILENT_MS + 5000);
    mock.timers.tick(0);
    mock.timers.tick(999);
    assert.equal(helper.terminated, false);
    mock.timers.tick(1);
    assert.equal(helper.terminated, true);
    await assert.rejects(downloads.snapshot, SNAPSHOT_GONE);
    assert.deepEqual(asked, ["http://x/s.bin"]);
  });
});

test("a watch whose every timer fires late gives the queue one more second, not more", async () => {
  await withDownloadWorkers(async () => {
    const [helper] = FakeWorker.made;
    helper.say({ started: "snapshot" });
    mock.timers.setTime(DOWNLOAD_WORKER_SILENT_MS + 500);
    mock.timers.tick(0);
    assert.equal(helper.terminated, false);
    mock.timers.setTime(DOWNLOAD_WORKER_SILENT_MS + 2000); // its second also fires late
    mock.timers.tick(0);
    assert.equal(helper.terminated, true);
  });
});

// The wheels' download starts once half the snapshot has come (or the snapshot's download has
// ended, however it ended): the wheels then arrive last, and the restore runs while they come.
const BOTH = {
  snapshot: { url: "http://x/s.bin", size: 1000 },
  packages: ["numpy"],
  wheels: [{ name: "numpy", url: "http://x/numpy.whl" }],
};
const jobsGiven = (helper) => helper.messages.map((m) => m.name);

test("the wheels' download worker gets its job once half the snapshot has come", async () => {
  await withDownloadWorkers(async (downloads) => {
    const [snapshot, wheels] = FakeWorker.made;
    assert.deepEqual([jobsGiven(snapshot), jobsGiven(wheels)], [["snapshot"], []]);
    // Its watch starts with the job: waiting for the snapshot is not silence.
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS * 3);
    await Promise.resolve();
    assert.equal(wheels.terminated, false);
    snapshot.say({ started: "snapshot" });
    snapshot.say({ event: "halfway" });
    await Promise.resolve();
    assert.deepEqual(jobsGiven(wheels), ["wheels"]);
    wheels.say({ started: "wheels" });
    wheels.say({ name: "wheels", value: "prepared" });
    snapshot.say({ name: "snapshot", value: "restored" });
    assert.deepEqual([await downloads.snapshot, await downloads.wheels], ["restored", "prepared"]);
    assert.equal(downloads.where(), "download worker");
  }, BOTH);
});

test("a snapshot download that fails lets the wheels' download start", async () => {
  await withDownloadWorkers(async (downloads) => {
    const [snapshot, wheels] = FakeWorker.made;
    snapshot.say({ name: "snapshot", error: "the snapshot could not be fetched (HTTP 500)" });
    await assert.rejects(downloads.snapshot, { message: /HTTP 500/ });
    await Promise.resolve();
    assert.deepEqual(jobsGiven(wheels), ["wheels"]);
  }, BOTH);
});

test("without the snapshot's size, or without a snapshot, the wheels start at once", async () => {
  const { size, ...unsized } = BOTH.snapshot;
  for (const config of [{ ...BOTH, snapshot: unsized }, { ...BOTH, snapshot: null }]) {
    FakeWorker.made = [];
    await withDownloadWorkers(async () => {
      const wheels = FakeWorker.made.at(-1);
      assert.deepEqual(jobsGiven(wheels), ["wheels"]);
    }, config);
  }
});

test("the snapshot's job says halfway once, when half its bytes have been read", async () => {
  const real = globalThis.fetch;
  const events = [];
  const pieces = [250, 250, 250, 250].map((n) => new Uint8Array(n));
  globalThis.fetch = async () =>
    new Response(
      new ReadableStream({
        pull(stream) {
          const piece = pieces.shift();
          if (!piece) return stream.close();
          events.push(`piece ${piece.length}`);
          stream.enqueue(piece);
        },
      }),
    );
  try {
    const config = { snapshot: { url: "http://x/s.bin", sha256: "0".repeat(64), size: 1000 } };
    const halfway = () => events.push("halfway");
    // The bytes are no snapshot, so the check refuses them; what matters is when halfway came.
    await assert.rejects(JOBS.snapshot.run(config, { halfway }));
  } finally {
    globalThis.fetch = real;
  }
  const at = events.indexOf("halfway");
  assert.equal(events.filter((e) => e === "halfway").length, 1);
  // Not before half the bytes were sent; before the last piece was (a stream reads one ahead).
  assert.ok(at * 250 >= 1000 * WHEELS_AFTER_SNAPSHOT, events.join(", "));
  assert.equal(events.at(-1), "piece 250", events.join(", "));
});

// The learner bundle starts once nine tenths of the wheels have come (download-order.js), or once
// the wheels' download has ended, however it ended; at once when there are no wheels to fetch.
async function settled(promise) {
  let done = false;
  promise.then(() => (done = true));
  for (let turn = 0; turn < 10; turn++) await Promise.resolve(); // its timers are mocked
  return done;
}

const WITH_BUNDLE = { ...BOTH, bundleUrl: "http://x/bundle.zip" };
/** The download worker started for job `name`. */
const helperFor = (name) => FakeWorker.made.find((w) => w.options.name.endsWith(`: ${name}`));

test("the learner bundle's job is given once the wheels' job says they have nearly come", async () => {
  await withDownloadWorkers(async (downloads) => {
    helperFor("snapshot").say({ event: "halfway" });
    await settled(Promise.resolve());
    assert.deepEqual(jobsGiven(helperFor("bundle")), []);
    helperFor("wheels").say({ event: "nearlyDone" });
    await settled(Promise.resolve());
    assert.deepEqual(jobsGiven(helperFor("bundle")), ["bundle"]);
    const library = { names: ["promptdojo/__init__.py"], files: {} };
    helperFor("bundle").say({ name: "bundle", value: library });
    assert.equal(await downloads.bundle, library);
  }, WITH_BUNDLE);
});

test("a wheels' download that fails lets the learner bundle's start", async () => {
  await withDownloadWorkers(async (downloads) => {
    helperFor("snapshot").say({ event: "halfway" });
    await settled(Promise.resolve());
    helperFor("wheels").say({ name: "wheels", error: "numpy.whl could not be fetched (HTTP 500)" });
    await assert.rejects(downloads.wheels);
    await settled(Promise.resolve());
    assert.deepEqual(jobsGiven(helperFor("bundle")), ["bundle"]);
  }, WITH_BUNDLE);
});

test("without wheels to fetch, the learner bundle's download starts at once", async () => {
  await withDownloadWorkers(async () => {
    await settled(Promise.resolve());
    assert.deepEqual(jobsGiven(helperFor("bundle")), ["bundle"]);
  }, { snapshot: BOTH.snapshot, bundleUrl: WITH_BUNDLE.bundleUrl });
});

/** A fetch that answers `bytes` in four pieces, logging each piece it sends. */
function inPieces(bytes, events) {
  return async () => {
    const quarter = Math.ceil(bytes.length / 4);
    const pieces = [0, 1, 2, 3].map((i) => bytes.slice(i * quarter, (i + 1) * quarter));
    return new Response(
      new ReadableStream({
        pull(stream) {
          const piece = pieces.shift();
          if (!piece) return stream.close();
          events.push("piece");
          stream.enqueue(piece);
        },
      }),
    );
  };
}

test("the wheels' job says nearlyDone once, when nine tenths of the archives have come", async () => {
  const real = globalThis.fetch;
  const events = [];
  globalThis.fetch = inPieces(compiledWheel.bytes, events);
  const sized = { ...config, compiled: { ...compiledWheel.entry, size: compiledWheel.bytes.length } };
  try {
    const nearlyDone = () => events.push("nearlyDone");
    const [prepared] = await JOBS.wheels.run({ wheels: [sized] }, { nearlyDone });
    assert.equal(prepared.bytecode, true);
  } finally {
    globalThis.fetch = real;
  }
  assert.equal(events.filter((e) => e === "nearlyDone").length, 1, events.join(", "));
  assert.ok(events.indexOf("nearlyDone") >= 3, events.join(", ")); // after the fourth piece
});

test("a wheel without a compiled archive of known size lets what comes after start at once", async () => {
  const answers = { [plainWheel.entry.url]: plainWheel.bytes };
  await withFetch(answers, async () => {
    const events = [];
    const run = JOBS.wheels.run({ wheels: [config] }, { nearlyDone: () => events.push("now") });
    assert.deepEqual(events, ["now"]); // before any byte: the archive's size is not known
    await run;
  });
});

test("a job still waiting for its gate when the boot stops the downloads is never given", async () => {
  await withDownloadWorkers(async (downloads, asked) => {
    downloads.stop();
    helperFor("snapshot").say({ event: "halfway" });
    helperFor("wheels").say({ event: "nearlyDone" });
    await settled(Promise.resolve());
    mock.timers.tick(DOWNLOAD_WORKER_SILENT_MS * 2);
    await settled(Promise.resolve());
    assert.deepEqual([jobsGiven(helperFor("wheels")), jobsGiven(helperFor("bundle"))], [[], []]);
    assert.deepEqual(asked, []); // nothing fetched here in their place either
  }, WITH_BUNDLE);
});
