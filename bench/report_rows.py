"""BENCHMARKS.md's summary rows: each figure's result file, key, meaning and goal.

Used by bench/report.py; the shaped-link and first-run rows are bench/report_shaped.py's.
"""

from __future__ import annotations

# (result file, figure key, what it means, goal as (operator, value) or None)
ROWS = [
    (
        "browser",
        "kernel_ready_ratio",
        "kernel-ready on a lesson step / on a bare Pyodide page",
        ("<=", 1.10),
    ),
    (
        "browser",
        "next_step_ratio",
        "Next-step click until cells can run / cold kernel-ready",
        ("<=", 0.02),
    ),
    (
        "browser",
        "warm_visit_ratio",
        "kernel-ready on a second visit (HTTP cache) / first visit",
        ("<=", 0.5),
    ),
    (
        "browser",
        "wire_bytes_ratio",
        "bytes on the wire on a first visit / their decoded size",
        ("<=", 0.4),
    ),
    ("browser", "next_step_ms", "Next-step click until the next step's cells can run (ms)", None),
    (
        "controls",
        "control_to_output_ms",
        "a control change until its light cell's new output (ms, median, debounce included)",
        ("<=", 100),
    ),
    ("browser", "warm_visit_ms", "kernel-ready on a second visit (ms, median)", None),
    ("browser", "round_trip_ms", "first Run of a plain-Python cell until its output (ms)", None),
    (
        "browser",
        "stop_latency_ms",
        "Stop on `while True: pass` until the cell says stopped (ms)",
        None,
    ),
    ("browser", "kernel_ready_step_ms", "cold kernel-ready on the lesson step (ms, median)", None),
    ("browser", "kernel_ready_bare_ms", "cold kernel-ready on the bare page (ms, median)", None),
    ("browser", "kernel_ready_step_runs_ms", "every cold run on the lesson step (ms)", None),
    ("browser", "kernel_ready_bare_runs_ms", "every cold run on the bare page (ms)", None),
    (
        "snapshot_boot",
        "numpy_release.snapshot_ratio",
        "lesson ready with numpy, restored from the snapshot / bare core page (Pyodide 0.29.0)",
        ("<=", 0.6),
    ),
    (
        "snapshot_boot",
        "numpy_release.cold_ratio",
        "the same, booted without the snapshot (before) / bare core page (0.29.0)",
        None,
    ),
    (
        "snapshot_boot",
        "core.snapshot_ratio",
        "lesson ready, restored / bare core page (Pyodide 314.0.7, no numpy)",
        ("<=", 0.4),
    ),
    (
        "snapshot_boot",
        "core.cold_ratio",
        "the same, booted without the snapshot (before) / bare core page (314.0.7)",
        None,
    ),
    (
        "snapshot_boot",
        "core.second_visit_ratio",
        "second visit (the first visit's offline copy written; files from the service worker's"
        " cache), restored"
        " / first bare boot (314.0.7)",
        ("<=", 0.35),
    ),
    (
        "snapshot_boot",
        "core.revisit_now_ratio",
        "second visit at once, while the first visit's offline copy is written"
        " / first bare boot (314.0.7)",
        None,
    ),
    (
        "snapshot_boot",
        "numpy_release.second_visit_ratio",
        "second visit with numpy (the first visit's offline copy written; files from the service"
        " worker's cache), restored"
        " / first bare boot (0.29.0)",
        ("<=", 0.35),
    ),
    (
        "snapshot_boot",
        "numpy_release.revisit_now_ratio",
        "second visit with numpy at once, while the first visit's offline copy is written"
        " / first bare boot (0.29.0)",
        None,
    ),
    ("snapshot_boot", "core.snapshot_ms", "lesson ready, restored (ms, median, 314.0.7)", None),
    ("snapshot_boot", "core.cold_ms", "lesson ready, cold boot (ms, median, 314.0.7)", None),
    ("snapshot_boot", "core.bare_ms", "bare core page ready (ms, median, 314.0.7)", None),
    (
        "snapshot_boot",
        "numpy_release.snapshot_ms",
        "lesson ready with numpy, restored (ms, median, 0.29.0)",
        None,
    ),
    (
        "snapshot_boot",
        "numpy_release.cold_ms",
        "lesson ready with numpy, cold boot (ms, median, 0.29.0)",
        None,
    ),
    (
        "snapshot_boot",
        "numpy_release.bare_ms",
        "bare core page ready (ms, median, 0.29.0)",
        None,
    ),
    (
        "snapshot_boot",
        "core.snapshot_wire_bytes",
        "the snapshot's bytes on the wire, zstd as Chromium accepts it (314.0.7)",
        None,
    ),
    (
        "snapshot_boot",
        "numpy_release.snapshot_wire_bytes",
        "the snapshot's bytes on the wire, zstd as Chromium accepts it (0.29.0)",
        None,
    ),
    (
        "export_boot",
        "export_ratio",
        "cold kernel-ready: export behind a static host with its _headers / promptdojo serve",
        ("<=", 1.05),
    ),
    (
        "export_boot",
        "http_server_ratio",
        "cold kernel-ready: export behind python -m http.server (one reload) / promptdojo serve",
        ("<=", 1.05),
    ),
    (
        "export_boot",
        "page_start_ms.export_http_server",
        "behind python -m http.server: the reloaded page starts, ms after the request (median)",
        None,
    ),
    ("export_boot", "serve_ms", "cold kernel-ready from promptdojo serve (ms, median)", None),
    ("server", "c1.rps_ratio", "step-page req/s / hello-world req/s, 1 client", None),
    ("server", "c16.rps_ratio", "step-page req/s / hello-world req/s, 16 clients", (">=", 0.7)),
    ("server", "c64.rps_ratio", "step-page req/s / hello-world req/s, 64 clients", None),
    ("server", "c16.step.p50_ms", "step page p50 latency at 16 clients (ms)", None),
    ("server", "c16.step.p99_ms", "step page p99 latency at 16 clients (ms)", None),
    (
        "server",
        "load_200_clients_20s.errors",
        "errors in 200 clients x 20 s on the step page",
        ("<=", 0),
    ),
    ("server", "load_200_clients_20s.requests", "requests served in that load run", None),
    (
        "check",
        "overhead_ratio_j1",
        "`promptdojo check lessons -j 1` wall / raw cell time",
        ("<=", 1.5),
    ),
    (
        "check",
        "overhead_ratio_j2",
        "`promptdojo check lessons -j 2` wall / raw cell time",
        ("<=", 1.5),
    ),
    ("check", "speedup_j2_vs_j1", "wall time at -j 1 / wall time at -j 2", None),
    (
        "check_cells",
        "cells_ratio",
        "`promptdojo check` of one step of 10,000 cells / of 2,000 cells",
        ("<=", 5),
    ),
    ("check_cells", "cells_2000_s", "`promptdojo check` of one step of 2,000 cells (s)", None),
    (
        "lesson_cells",
        "slowest_cell_ms",
        "slowest lesson cell in Chromium, Pyodide with numpy (ms)",
        ("<=", 2000),
    ),
    (
        "lesson_cells",
        "lesson_total_ms",
        "the whole lesson's cell time in Chromium, Pyodide with numpy (ms)",
        ("<=", 15000),
    ),
    ("lesson_cells", "cells_over_goal", "lesson cells over 2 s in Chromium", ("<=", 0)),
    ("lesson_cells", "browser_cpython_ratio", "lesson cell time: Chromium / CPython", None),
    ("engines", "firefox_ratio", "kernel-ready from the snapshot: Firefox / Chromium", ("<=", 1.5)),
    ("engines", "webkit_ratio", "kernel-ready from the snapshot: WebKit / Chromium", ("<=", 1.5)),
    (
        "engines",
        "webkit_no_sab_ratio",
        "kernel-ready from the snapshot: WebKit without shared memory / Chromium",
        ("<=", 1.5),
    ),
    ("engines", "ready_ms", "kernel-ready from the snapshot per engine (ms, median)", None),
    (
        "engines",
        "next_step_runnable_ms",
        "Next-step click until the step's cells can run, per engine (ms, median)",
        None,
    ),
    (
        "engines",
        "next_step_shown_ms",
        "Next-step click until the step has been drawn, per engine (ms, median)",
        None,
    ),
    (
        "first_visits_firefox",
        "replaced",
        "Firefox fresh first visits (50): kernel workers replaced for saying nothing",
        None,
    ),
    (
        "first_visits_firefox",
        "replaced_ready_ms",
        "Firefox first visits through a replaced worker: kernel-ready (ms)",
        None,
    ),
    (
        "first_visits_firefox",
        "ready_ms_median",
        "Firefox first visits: kernel-ready (ms, median)",
        None,
    ),
    ("library", "kv_speedup_64", "recomputed / KV-cached decoding time, 64 new tokens", None),
    (
        "library",
        "kv_speedup_256",
        "recomputed / KV-cached decoding time, 256 new tokens",
        (">=", 10),
    ),
    ("library", "kv_speedup_1024", "recomputed / KV-cached decoding time, 1024 new tokens", None),
    (
        "library",
        "int8_vs_copy_throughput",
        "int8 quantization throughput / np.copy, 16M floats",
        (">=", 0.2),
    ),
    (
        "course_scale",
        "validate.cold_s",
        "validate, 300 lessons × 7 steps, cold: no parse cache, as in a fresh clone (s)",
        ("<=", 5),
    ),
    (
        "course_scale",
        "validate.unchanged_s",
        "validate, 300 lessons × 7 steps, nothing changed since the last run (s)",
        None,
    ),
    (
        "course_scale",
        "validate.fresh_clone_cached_s",
        "validate, 300 lessons × 7 steps, a fresh clone at the same path with the last run's"
        " parse cache restored, as in a CI job that caches it (s)",
        None,
    ),
    (
        "course_scale",
        "reload.max_s",
        "serve --reload, 300 lessons: a saved step until the page shows it (s, slowest of 5)",
        ("<=", 0.3),
    ),
    (
        "course_scale",
        "pages_16_clients.index.p99_ms",
        "course map (300 lessons) p99 at 16 clients (ms)",
        ("<=", 20),
    ),
    (
        "course_scale",
        "pages_16_clients.step.p99_ms",
        "step page of a 300-lesson course p99 at 16 clients (ms)",
        ("<=", 20),
    ),
    ("course_scale", "export.seconds", "export of the 300-lesson course (s)", ("<=", 60)),
    ("course_scale", "export.size_mb", "its size (MB)", None),
    (
        "course_scale",
        "export.per_lesson_kb",
        "its size per lesson beyond a one-lesson export (kB)",
        None,
    ),
    (
        "course_scale",
        "shards.slowest_over_mean",
        "check --shard I/4: the slowest shard's wall / (total ÷ 4)",
        ("<=", 1.2),
    ),
]
