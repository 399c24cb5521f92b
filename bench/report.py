"""Write BENCHMARKS.md from the result files of the latest `make bench` (bench/results/*.json).

python bench/report.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import report_shaped
from bench._common import RESULTS, ROOT

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


def _loop_note(results: dict) -> str:
    """The fixed Python loop's time on the machine of each result that measured it: how
    figures in seconds compare between machines (a run may not get the last run's machine)."""
    loops = sorted(
        {
            r["machine"]["python_loop_ms"]
            for r in results.values()
            if "python_loop_ms" in r["machine"]
        }
    )
    if not loops:
        return ""
    spread = f"{loops[0]:g} ms" if len(loops) == 1 else f"{loops[0]:g} to {loops[-1]:g} ms"
    return (
        f" A fixed loop of pure Python (`bench/_common.py`'s `python_loop_ms`) took {spread}"
        " where it was measured: figures in seconds scale with it."
    )


def lookup(data: dict, dotted: str) -> object:
    value: object = data
    for part in dotted.split("."):
        value = value[part]  # type: ignore[index]
    return value


PHASES = [
    ("pd:boot-start", "start.js runs (the inline script started the worker before it)"),
    ("pd:phase-starting", "the worker has `loadPyodide`"),
    ("pd:python-ready", "Pyodide up, learner bundle unpacked, kernel imported"),
    ("pd:ready", "the lesson's packages tried; cells can run"),
]


def profile_section(profile: dict) -> list[str]:
    """The start-up profile: marks per scenario, and what crossed the wire."""
    marks = profile["figures"]["marks"]
    names = list(marks)
    lines = [
        "## Start-up profile",
        "",
        f"From `{profile['command']}` ({profile['date']}): milliseconds from navigation to each",
        "performance mark the page records.",
        "",
        "| mark | meaning | " + " | ".join(names) + " |",
        "| --- | --- | " + " | ".join("---" for _ in names) + " |",
    ]
    for mark, meaning in PHASES:
        row = " | ".join(str(marks[n].get(mark, "")) for n in names)
        lines.append(f"| `{mark}` | {meaning} | {row} |")
    load = {n: marks[n]["pd:python-ready"] - marks[n]["pd:phase-starting"] for n in names}
    lines += [
        "",
        "Time inside `loadPyodide` and the bundle (`starting` to `python-ready`): "
        + ", ".join(f"{n} {v} ms" for n, v in load.items())
        + ".",
        "",
        "| response | bytes on the wire | encoding | decoded bytes |",
        "| --- | --- | --- | --- |",
    ]
    wire = profile["figures"]["wire"]
    for row in wire:
        lines.append(
            f"| `{row['file']}` | {row['bytes']:,} | {row['encoding']} | {row['decoded']:,} |"
        )
    sent = sum(r["bytes"] for r in wire)
    decoded = sum(r["decoded"] for r in wire)
    stored = [r for r in wire if r["encoding"] == "-" and r["file"].endswith(".zip")]
    lines += [
        "",
        f"Already-compressed zips (sent as they are): {sum(r['bytes'] for r in stored):,} bytes, "
        f"{100 * sum(r['bytes'] for r in stored) / sent:.0f} % of the wire bytes and "
        f"{100 * sum(r['decoded'] for r in stored) / decoded:.0f} % of the decoded bytes.",
    ]
    return lines


def cells_section(result: dict, baseline: dict | None, slowest: int = 12) -> list[str]:
    """The slowest lesson cells in the browser, with CPython beside them (and a baseline)."""
    figures = result["figures"]
    before = {c["cell"]: c for c in baseline["figures"]["per_cell"]} if baseline else {}
    lines = [
        "## Lesson cells in the browser",
        "",
        f"From `{result['command']}` ({result['date']}): Chromium, Pyodide {figures['pyodide']} "
        "with numpy, the worker's time in Python per cell (set-up cells alone; an exercise as "
        "starter + check + solution + check), and the same cells in CPython.",
        "",
    ]
    head = "| cell | Chromium (ms) | CPython (ms) | ratio |"
    rule = "| --- | --- | --- | --- |"
    if before:
        head += " Chromium before (ms) |"
        rule += " --- |"
    lines += [head, rule]
    for cell in figures["per_cell"][:slowest]:
        row = (
            f"| `{cell['cell']}` | {cell['browser_ms']:,.0f} | {cell['cpython_ms'] or 0:,.0f} | "
            f"{cell['ratio'] or ''} |"
        )
        if before:
            old = before.get(cell["cell"])
            row += f" {old['browser_ms']:,.0f} |" if old else " |"
        lines.append(row)
    lines += [
        "",
        f"All {figures['cells']} cells: {figures['lesson_total_ms']:,} ms in Chromium, "
        f"{figures['lesson_total_cpython_ms']:,} ms in CPython "
        f"({figures['browser_cpython_ratio']}×).",
    ]
    if baseline:
        old = baseline["figures"]
        lines.append(
            f"Before (`{baseline['command']}` at commit {baseline.get('commit', '?')}, "
            f"{baseline['date']}): slowest "
            f"`{old['slowest_cell']}` {old['slowest_cell_ms']:,.0f} ms, all cells "
            f"{old['lesson_total_ms']:,} ms in Chromium, {old['lesson_total_cpython_ms']:,} ms "
            "in CPython."
        )
    return lines


def main() -> None:
    results = {p.stem: json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))}
    lines = [
        "# Benchmarks",
        "",
        "Every figure is a ratio against a baseline measured in the same run, or a count.",
        "This file is written by `make bench` (`python bench/report.py`) from",
        "`bench/results/*.json`; edit the scripts, not this file. Each script also runs alone",
        "(the command column).",
        "",
    ]
    machine = next(iter(results.values()))["machine"] if results else {}
    if machine:
        lines += [
            f"Machine: {machine['cores']} cores, {machine['memory_gib']} GiB, Python "
            f"{machine['python']}, numpy {machine['numpy']}, {machine['platform']}."
            + _loop_note(results),
            "",
        ]
    lines += [
        "| figure | value | goal | met | command | run |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, key, meaning, goal in [*ROWS, *report_shaped.ROWS]:
        if name not in results:
            continue
        value = lookup(results[name]["figures"], key)
        met = ""
        if goal is not None:
            op, target = goal
            met = "yes" if (value <= target if op == "<=" else value >= target) else "**no**"
        goal_text = f"{goal[0]} {goal[1]}" if goal else ""
        lines.append(
            f"| {meaning} | {value} | {goal_text} | {met} | `{results[name]['command']}` | "
            f"{results[name]['date']} |"
        )
    if "profile" in results:
        lines += ["", *profile_section(results["profile"])]
    if "lesson_cells" in results:
        baseline = results.get("lesson_cells_before")
        lines += ["", *cells_section(results["lesson_cells"], baseline)]
    if "shaped_link" in results:
        lines += ["", *report_shaped.shaped_section(results["shaped_link"])]
    if "first_run" in results:
        lines += [
            "",
            *report_shaped.first_run_section(
                results["first_run"], results.get("lesson_cells"), results.get("first_run_before")
            ),
        ]
    notes = ROOT / "bench" / "NOTES.md"
    if notes.is_file():
        lines += ["", notes.read_text().strip()]
    (ROOT / "BENCHMARKS.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
