"""A course of 300 lessons × 7 steps: validate, a reload under ``serve --reload``, the pages at 16
clients, the export, and the balance of ``check --shard``.

    python bench/course_scale.py [--lessons 300] [--shards 4] [--check-lessons 8]

The course is generated in a temporary folder from the real lesson (copies with new ids, 30
lessons a chapter in a course.yaml). Each figure comes from the real command or server:

- ``validate``: ``promptdojo validate`` in a fresh process, cold (no parse cache: a fresh
  clone, as a new author meets it; the goal is about this one), again with nothing changed (the
  cache the cold run left reused), and in a fresh copy of the course at the same path with that
  cache kept (what a CI job that caches ``.cache/parsed`` between runs meets);
- reload: ``serve --reload`` on the course; a step file is saved and the time until the server's
  live-reload stream says ``reload`` and the step page then shows the new text, five times;
- pages: the index and a step page, 16 keyed-alive clients for 5 s each (``bench/server.py``'s
  load generator), on a ``serve`` without reload;
- export: wall time and size of ``promptdojo export``, and the size the same export of one
  lesson takes (the shared files: Pyodide, the bundle, the snapshot, the assets);
- shards: ``check --record`` on ``--check-lessons`` lessons (CPython) keeps their step times,
  then each of ``check --shard I/N`` runs, and its wall time is compared to the total ÷ N.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, save
from bench.server import measure
from tests.e2e.conftest import COMPRESSED, SNAPSHOTS, start_server, stop_server

LESSON = ROOT / "lessons" / "decoding-kv-cache-quantization"
PROMPTDOJO = [sys.executable, "-m", "promptdojo"]


def generate(into: Path, count: int) -> Path:
    """``count`` copies of the real lesson with new ids, and a course.yaml listing them."""
    lessons = into / "lessons"
    lessons.mkdir(parents=True)
    chapters = []
    for index in range(count):
        lesson_id = f"lesson-{index:03d}"
        folder = lessons / lesson_id
        shutil.copytree(LESSON, folder)
        meta = folder / "lesson.yaml"
        meta.write_text(re.sub(r"^id: .*$", f"id: {lesson_id}", meta.read_text(), flags=re.M))
        # The real lesson links to lessons beside it: each copy links to the next copy instead.
        after = f"lesson:lesson-{(index + 1) % count:03d}"
        for step in folder.glob("*.md"):
            text = step.read_text()
            linked = re.sub(r"lesson:(?!lesson-)[a-z0-9][a-z0-9-]*", after, text)
            if linked != text:
                step.write_text(linked)
        if index % 30 == 0:
            chapters.append([])
        chapters[-1].append(lesson_id)
    lines = ["title: A generated course", "parts:"]
    for part in range(0, len(chapters), 5):
        lines += [f"  - title: Part {part // 5 + 1}", "    chapters:"]
        for number, ids in enumerate(chapters[part : part + 5], start=part + 1):
            lines += [f"      - number: {number}", f"        title: Chapter {number}"]
            lines += ["        lessons:"] + [f"          - {i}" for i in ids]
    (lessons / "course.yaml").write_text("\n".join(lines) + "\n")
    return lessons


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed


def bench_validate(lessons: Path, work: Path) -> dict:
    command = [*PROMPTDOJO, "validate", str(lessons)]
    cache = work / ".cache" / "parsed"  # validate's cache, below the folder it runs in
    colds = []
    for _ in range(3):
        shutil.rmtree(cache, ignore_errors=True)
        colds.append(timed(command, work))
    warm = min(timed(command, work) for _ in range(3))
    clones = []
    for _ in range(3):
        # A fresh checkout at the same path: the same bytes, new inodes and times (as in a CI
        # job that restored the cache folder from an earlier run).
        shutil.copytree(lessons, lessons.with_name("clone"), copy_function=shutil.copy)
        shutil.rmtree(lessons)
        lessons.with_name("clone").rename(lessons)
        clones.append(timed(command, work))
    return {
        "cold_s": round(min(colds), 2),
        "cold_runs_s": [round(c, 2) for c in colds],
        "unchanged_s": round(warm, 2),
        "fresh_clone_cached_s": round(min(clones), 2),
    }


def _wait_for_reload(url: str, saved: list[float], timeout: float = 30.0) -> float:
    """Read the live stream until ``reload``; the seconds since ``saved[0]``."""
    with urllib.request.urlopen(url + "/_live", timeout=timeout) as stream:
        for raw in stream:
            if raw.startswith(b"data: reload"):
                return time.perf_counter() - saved[0]
    raise RuntimeError("the live stream ended without a reload")


def bench_reload(lessons: Path, work: Path, runs: int = 5) -> dict:
    import threading

    server = start_server(lessons, work, "--reload", "--log-level", "warning")
    step = lessons / "lesson-150" / "03-truncation.md"
    page = server.url + "/lessons/lesson-150/3"
    latencies = []
    try:
        urllib.request.urlopen(page).read()
        for run in range(runs):
            marker = f"Saved edit number {run}."
            saved = [0.0]
            listener = threading.Thread(target=_wait_for_reload, args=(server.url, saved))
            listener.start()
            time.sleep(0.5)  # the stream is open
            text = step.read_text()
            saved[0] = time.perf_counter()
            step.write_text(text + f"\n{marker}\n")
            listener.join(30)
            body = urllib.request.urlopen(page).read().decode()
            shown = time.perf_counter() - saved[0]
            if marker not in body:
                raise RuntimeError("the page does not show the saved edit")
            latencies.append(shown)
            time.sleep(0.5)
    finally:
        stop_server(server)
    return {
        "save_to_page_s": [round(x, 3) for x in latencies],
        "median_s": round(sorted(latencies)[len(latencies) // 2], 3),
        "max_s": round(max(latencies), 3),
    }


def bench_pages(lessons: Path, work: Path) -> dict:
    server = start_server(lessons, work, "--log-level", "warning")
    port = int(server.url.rsplit(":", 1)[1])
    figures = {}
    try:
        for name, path in (("index", "/"), ("step", "/lessons/lesson-150/3")):
            measure(port, path, 4, 1.0)  # warm up: the first render
            figures[name] = measure(port, path, 16, 5.0)
            print(name, figures[name], flush=True)
    finally:
        stop_server(server)
    return figures


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def bench_export(lessons: Path, work: Path) -> dict:
    common = ["--snapshot-cache", str(SNAPSHOTS), "--compressed-cache", str(COMPRESSED)]
    common += ["--lessons-dir", str(lessons), "--base-url", "/course/"]
    # numpy, which the lessons declare: the tests' Pyodide 0.29.0 release holds it; else the
    # checkout's package cache.
    release = ROOT / ".cache" / "test-pyodide" / "pyodide-0.29.0-numpy"
    if release.is_dir():
        common += ["--pyodide-dir", str(release)]
    else:
        common += ["--package-cache", str(ROOT / ".cache" / "pyodide-packages")]
    one = work / "one"
    timed([*PROMPTDOJO, "export", str(one), "lesson-000", *common], work)
    whole = work / "site"
    seconds = timed([*PROMPTDOJO, "export", str(whole), *common], work)
    size, base = _size(whole), _size(one)
    return {
        "seconds": round(seconds, 1),
        "size_mb": round(size / 1e6, 1),
        "one_lesson_export_mb": round(base / 1e6, 1),
        "per_lesson_kb": round(
            (size - base) / (len(list(lessons.glob("*/lesson.yaml"))) - 1) / 1e3
        ),
        "files": sum(1 for p in whole.rglob("*") if p.is_file()),
    }


def bench_shards(work: Path, count: int, shards: int) -> dict:
    # A course of its own: each copy links to the next copy, so the last must be among them.
    subset = generate(work / "subset", count)
    # One step process at a time, so a shard's wall time is the sum of its steps' times.
    timed([*PROMPTDOJO, "check", str(subset), "--record", "-j", "1"], work)
    walls = []
    for index in range(1, shards + 1):
        walls.append(
            timed(
                [*PROMPTDOJO, "check", str(subset), "--shard", f"{index}/{shards}", "-j", "1"], work
            )
        )
    total = sum(walls)
    return {
        "lessons": count,
        "shards": shards,
        "shard_wall_s": [round(w, 1) for w in walls],
        "slowest_over_mean": round(max(walls) / (total / shards), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lessons", type=int, default=300)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--check-lessons", type=int, default=8)
    parser.add_argument("--only", default="validate,reload,pages,export,shards")
    args = parser.parse_args()
    wanted = args.only.split(",")
    figures: dict[str, object] = {"lessons": args.lessons, "steps": args.lessons * 7}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        lessons = generate(work, args.lessons)
        for name, run in (
            ("validate", lambda: bench_validate(lessons, work)),
            ("reload", lambda: bench_reload(lessons, work)),
            ("pages_16_clients", lambda: bench_pages(lessons, work)),
            ("export", lambda: bench_export(lessons, work)),
            ("shards", lambda: bench_shards(work, args.check_lessons, args.shards)),
        ):
            if name.split("_")[0] in wanted:
                figures[name] = run()
                print(name, figures[name], flush=True)
    command = "python bench/course_scale.py " + " ".join(sys.argv[1:])
    save("course_scale", figures, command.strip())


if __name__ == "__main__":
    main()
