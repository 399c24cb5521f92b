"""BENCHMARKS.md's rows and sections for a first visit over a shaped link and for first runs.

Used by bench/report.py (bench/shaped_link.py and bench/first_run.py write the results).
"""

from __future__ import annotations

MB = 13_000_000
PATHS = {
    "serve_core": "`promptdojo serve` (built-in core, no numpy)",
    "serve_release": "`promptdojo serve --pyodide-dir` (0.29.0 + numpy)",
    "export_http_server": "`promptdojo export` behind `python -m http.server`",
}
#: Files below this many bytes on the wire are summed into one line per path.
SMALL = 10_000

# (result file, figure key, what it means, goal), as bench/report.py's ROWS.
ROWS = [
    *(
        (
            "shaped_link",
            f"{key}.bytes_before_ready",
            f"bytes on the wire before ready, first visit: {name}",
            ("<=", MB),
        )
        for key, name in PATHS.items()
    ),
    (
        "shaped_link",
        "export_over_serve.bytes",
        "bytes before ready: export behind http.server / serve --pyodide-dir",
        ("<=", 1.05),
    ),
    (
        "shaped_link",
        "export_over_serve.ready_link_20",
        "ready at 20 Mbit/s, 40 ms: export behind http.server / serve --pyodide-dir",
        ("<=", 1.05),
    ),
    *(
        (
            "shaped_link",
            f"{key}.link_20.over_edge",
            f"ready at 20 Mbit/s / (1.15 × bytes ÷ link + 0.5 s): {name}",
            ("<=", 1.0),
        )
        for key, name in PATHS.items()
    ),
    (
        "first_run",
        "chromium.first_output.click_to_output_ms",
        "step 1's first cell (numpy, promptdojo.decoding) pressed at ready: click to output (ms)",
        ("<=", 300),
    ),
    (
        "first_run",
        "chromium.slowest_first_run_ms",
        "slowest first run of a lesson cell on a fresh page, Chromium (ms, the page's Done in)",
        ("<=", 2000),
    ),
    (
        "first_run",
        "chromium.cells_over_goal",
        "lesson cells whose first run on a fresh page takes over 2 s in Chromium",
        ("<=", 0),
    ),
    # The other engines, beside Chromium's goal (bench/first_run.py --engine ...).
    *(
        row
        for engine, name in (("firefox", "Firefox"), ("webkit", "WebKit"))
        for row in (
            (
                f"first_run_{engine}",
                f"{engine}.slowest_first_run_ms",
                f"slowest first run of a lesson cell on a fresh page, {name} (ms)",
                None,
            ),
            (
                f"first_run_{engine}",
                f"{engine}.cells_over_goal",
                f"lesson cells whose first run on a fresh page takes over 2 s in {name}",
                None,
            ),
            (
                f"first_run_{engine}",
                f"{engine}.first_output.click_to_output_ms",
                f"step 1's first cell pressed at ready, {name}: click to output (ms)",
                None,
            ),
        )
    ),
]
#: The first-run results of each engine (bench/first_run.py's result names), in table order.
FIRST_RUN_ENGINES = {
    "first_run": "Chromium",
    "first_run_firefox": "Firefox",
    "first_run_webkit": "WebKit",
    "first_run_webkit-no-sab": "WebKit, no shared memory",
}


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def _s(ms: float) -> str:
    return f"{ms / 1000:.1f} s"


def shaped_section(result: dict) -> list[str]:
    """Bytes and ready per path, the boot's files, requests per URL, and many learners at once."""
    fig = result["figures"]
    links = fig["links"]
    lines = [
        "## A first visit over a shaped link",
        "",
        f"From `{result['command']}` ({result['date']}, commit {result['commit']}): lesson step 1,"
        f" a fresh Chromium profile per run, medians of {fig['runs']} runs per link. Every byte"
        " goes through a shaping proxy (one downstream link shared by all connections, a round"
        " trip added per connection and per response). Bytes are exact (heads and bodies, as"
        " sent); times depend on the machine's load. The limit is the bytes ÷ the link's rate.",
        "",
        "| how it is served | bytes before ready | "
        + " | ".join(
            f"ready at {v['mbit']:g} Mbit/s, {v['latency_ms']:g} ms | limit | ready / limit"
            for v in links.values()
        )
        + " |",
        "| --- | --- | " + " | ".join("--- | --- | ---" for _ in links) + " |",
    ]
    for key, name in PATHS.items():
        row = fig[key]
        cells = [
            f"{_s(row[k]['ready_ms'])} | {_s(row[k]['limit_ms'])} | {row[k]['ratio']}"
            for k in links
        ]
        lines.append(f"| {name} | {_mb(row['bytes_before_ready'])} | " + " | ".join(cells) + " |")
    core = fig["serve_core"]["ready_detail"]
    lines += [
        "",
        f"The built-in core has no numpy: that page is ready with {core.get('missing')} missing,"
        " so its bytes are the core's alone.",
    ]
    for key, name in PATHS.items():
        lines += ["", *_files(name, fig[key])]
    lines += ["", *_crowd(fig["crowd"], links)]
    return lines


def _files(name: str, row: dict) -> list[str]:
    files = row["files"]
    big = [f for f in files if f["wire"] >= SMALL]
    small = [f for f in files if f["wire"] < SMALL]
    lines = [
        f"### The boot's files: {name}",
        "",
        "Requests made before ready on the first run, with their bytes on the wire before ready.",
        "",
        "| path | requests | bytes on the wire | encoding |",
        "| --- | --- | --- | --- |",
    ]
    lines += [f"| `{f['path']}` | {f['requests']} | {f['wire']:,} | {f['encoding']} |" for f in big]
    if small:
        lines.append(
            f"| {len(small)} other paths | {sum(f['requests'] for f in small)} | "
            f"{sum(f['wire'] for f in small):,} | |"
        )
    lines.append(
        f"| all | {sum(f['requests'] for f in files)} | {row['bytes_before_ready']:,} (median) | |"
    )
    whole = row["whole_visit"]
    twice = [r for r in whole if r["requests"] > 1]
    lines += [
        "",
        f"Whole first visit, until the offline copy is written: {sum(r['requests'] for r in whole)}"
        f" requests for {len(whole)} URLs, {row['whole_visit_bytes']:,} bytes on the wire."
        + (" Fetched more than once:" if twice else " No URL fetched twice."),
    ]
    if twice:
        lines += [
            "",
            "| path | requests | statuses | bytes on the wire, all requests |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{r['path']}` | {r['requests']} | {', '.join(map(str, r['statuses']))} |"
            f" {r['wire']:,} |"
            for r in twice
        ]
    return lines


def _crowd(crowd: dict, links: dict) -> list[str]:
    lines = [
        f"### Learners opening the step at once through one {crowd['rate_mbit']:g} Mbit/s link",
        "",
        "Plain HTTP/1.1 clients (six connections each, as Chromium per host) replay a browser's"
        f" requests before ready, with its headers, through one link ({crowd['latency_ms']:g} ms"
        " per connection and per response). A connection the host drops is retried on a new one"
        " (counted). The last row serves the same export from a static server that keeps"
        " connections alive and takes 1,024 waiting connections; `python -m http.server` speaks"
        " HTTP/1.0 (a connection per file) and takes 5.",
        "",
        "| how it is served | clients | bytes per client | last one has everything | "
        "clients × bytes ÷ link | ratio | dropped connections |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    names = {**PATHS, "export_keep_alive": "`promptdojo export` behind a keep-alive host"}
    for key, name in names.items():
        c = crowd.get(key)
        if c is None:
            continue
        if "timed_out_s" in c:
            lines.append(
                f"| {name} | {c['clients']} | | over {c['timed_out_s']:g} s |"
                f" {_s(c['limit_ms'])} | | |"
            )
            continue
        lines.append(
            f"| {name} | {c['clients']} | {_mb(c['bytes_per_client'])} | {_s(c['last_done_ms'])}"
            f" | {_s(c['limit_ms'])} | {c['ratio']} | {c['dropped_connections']} |"
        )
    return lines


def _machines(before: dict, now: dict) -> str:
    """How fast for Python each run's machine was (``python_loop_ms``, lower is faster): runs
    made on different machines are compared with that in view."""
    a, b = (r.get("machine", {}).get("python_loop_ms") for r in (before, now))
    if a is None or b is None:
        return "machine speed not recorded"
    return f"a pure-Python loop took {a:,.0f} ms there and {b:,.0f} ms now"


def first_run_section(result: dict, cells: dict | None, baseline: dict | None = None) -> list[str]:
    """Every cell's first run on a fresh page beside the warm median, per engine; with
    ``baseline`` (an earlier first-run result), its first run too.

    The warm medians come from ``cells`` (bench/lesson_cells.py's result of the same
    ``make bench``) where given, else from what the first-run result kept.
    """
    warm_of = {c["cell"]: c["browser_ms"] for c in cells["figures"]["per_cell"]} if cells else {}
    lines = ["## First runs on a fresh page", ""]
    for engine, fig in result["figures"].items():
        out = fig["first_output"]
        old = (baseline or {}).get("figures", {}).get(engine)
        before = {c["cell"]: c for c in old["per_cell"]} if old else {}
        lines += [
            f"From `{result['command']}` ({result['date']}, commit {result['commit']}): {engine},"
            f" Pyodide {fig['pyodide']} with numpy. Each cell pressed on a freshly loaded"
            " step page (a new browser context), after the step's earlier cells where it needs"
            " them. First run: the page's own \"Done in\" (for an exercise, the worker's time in"
            " the cell, its check and the step's set-up), the cells above it that the press ran"
            " first included; again: the same cell pressed a second time on that page;"
            " warm: `bench/lesson_cells.py`'s median of repeated runs. Times depend on the"
            " machine's load.",
            "",
            f"Step 1's first cell (`{out['cell']}`) pressed at ready: {out['click_to_output_ms']:,}"
            f" ms from the click to its output, {out['ready_to_output_ms']:,} ms from `pd:ready`.",
            "",
        ]
        if before:
            lines += [
                f"Before: `{baseline['command']}` ({baseline['date']}, commit"
                f" {baseline['commit']}), {_machines(baseline, result)}: slowest first run"
                f" {old['slowest_first_run_ms']:,.0f} ms, {old['cells_over_goal']} cells over"
                f" 2 s; now {fig['slowest_first_run_ms']:,.0f} ms and {fig['cells_over_goal']}.",
                "",
            ]
        again = all("again_ms" in c for c in fig["per_cell"])
        head = (
            "| cell | first run (ms) | the cell in the worker (ms) | set-up and cells run first,"
            " in the worker (ms) | cells above run first | warm median (ms) |"
            " earlier cells pressed by the bench |" + (" again (ms) |" if again else "")
        )
        lines += [head + (" first run before (ms) |" if before else ""), _rule(head, before)]
        for c in fig["per_cell"]:
            warm_ms = warm_of.get(c["cell"], c["warm_ms"]) if cells else c["warm_ms"]
            warm = f"{warm_ms:,.0f}" if warm_ms is not None else ""
            ran = len(c["ran_first"]) if "ran_first" in c else ""
            row = (
                f"| `{c['cell']}` | {c['done_ms']:,.0f} | {c['worker_ms']:,.0f} |"
                f" {c.get('setup_ms', 0):,.0f} | {ran} | {warm} | "
                f"{'yes' if c['with_earlier_cells'] else ''} |"
                + (f" {c['again_ms']:,.0f} |" if again else "")
            )
            if before:
                was = before.get(c["cell"])
                row += f" {was['done_ms']:,.0f} |" if was else " |"
            lines.append(row)
        lines.append("")
    return lines[:-1]


def _rule(head: str, before: dict) -> str:
    return "|" + " --- |" * (head.count("|") - 1 + (1 if before else 0))


def engines_section(results: dict) -> list[str]:
    """Each cell's first run (and second press) side by side in every engine measured, beside
    Chromium's warm median; empty with fewer than two engines."""
    found = {name: results[key] for key, name in FIRST_RUN_ENGINES.items() if key in results}
    if len(found) < 2:
        return []
    per_engine = {
        name: {c["cell"]: c for fig in r["figures"].values() for c in fig["per_cell"]}
        for name, r in found.items()
    }
    cells = results.get("lesson_cells", {}).get("figures", {}).get("per_cell", [])
    warm = {c["cell"]: c["browser_ms"] for c in cells}
    lines = [
        "## First runs per engine",
        "",
        "Each engine's `python bench/first_run.py --engine ...` run (a fresh browser a cell:"
        " Chromium a new context, Firefox and WebKit a new browser with a new profile). First:"
        " the first press on a freshly loaded step page, with the cells above that it needs;"
        " again: the same cell pressed once more on that page; warm: Chromium's median of"
        " repeated runs (`bench/lesson_cells.py`). Runs:",
        "",
        *(f"- {name}: {r['date']}, commit {r['commit']}." for name, r in found.items()),
        *(
            [
                f"- warm medians: {results['lesson_cells']['date']}, commit"
                f" {results['lesson_cells']['commit']}."
            ]
            if cells
            else []
        ),
        "",
    ]
    head = "| cell |" + "".join(f" {n} first (ms) | {n} again (ms) |" for n in found)
    lines += [head + " warm median, Chromium (ms) |", "|" + " --- |" * (head.count("|"))]
    first = next(iter(per_engine.values()))
    for cell in sorted(first, key=lambda c: -first[c]["done_ms"]):
        row = f"| `{cell}` |"
        for runs in per_engine.values():
            c = runs.get(cell)
            again = f"{c['again_ms']:,.0f}" if c and c.get("again_ms") is not None else ""
            row += f" {c['done_ms']:,.0f} | {again} |" if c else " | |"
        lines.append(row + (f" {warm[cell]:,.0f} |" if cell in warm else " |"))
    return lines + _read_first(results, found)


def _read_first(results: dict, at_ready: dict) -> list[str]:
    """The runs whose presses waited a few seconds after ready (``--read-for``), beside the
    same engine's presses at ready: the cells over 2 s in either."""
    lines = []
    for key, name in FIRST_RUN_ENGINES.items():
        read = [r for k, r in results.items() if k.startswith(key + "_read")]
        if not read or name not in at_ready:
            continue
        for result in read:
            fig = next(iter(result["figures"].values()))
            was = next(iter(at_ready[name]["figures"].values()))
            now = {c["cell"]: c for c in fig["per_cell"]}
            lines += [
                "",
                f"{name}, each cell pressed {fig['read_for_s']:g} s after ready, as a learner"
                f" reading the step first (`{result['command']}`, {result['date']}, commit"
                f" {result['commit']}): slowest first run {fig['slowest_first_run_ms']:,.0f} ms,"
                f" {fig['cells_over_goal']} cells over 2 s; pressed at ready:"
                f" {was['slowest_first_run_ms']:,.0f} ms and {was['cells_over_goal']}.",
                "",
                f"| cell | pressed at ready (ms) | pressed {fig['read_for_s']:g} s later (ms) |",
                "| --- | --- | --- |",
            ]
            for c in was["per_cell"]:
                later = now.get(c["cell"])
                if c["done_ms"] > 2000 or (later and later["done_ms"] > 2000):
                    shown = f"{later['done_ms']:,.0f}" if later else ""
                    lines.append(f"| `{c['cell']}` | {c['done_ms']:,.0f} | {shown} |")
    return lines
