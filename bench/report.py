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
from bench.report_rows import ROWS


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
    engines = report_shaped.engines_section(results)
    if engines:
        lines += ["", *engines]
    notes = ROOT / "bench" / "NOTES.md"
    if notes.is_file():
        lines += ["", notes.read_text().strip()]
    (ROOT / "BENCHMARKS.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")


if __name__ == "__main__":
    main()
