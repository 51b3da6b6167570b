"""Per-call overhead of the Python client (`memdir.Memory`: one long-lived `memdir mcp` child)
against `memdir tool` run as one process per call (the README's `subprocess.run` loop before the
package existed), in one run, on the same memories.

Run it with a Python that has the memdir wheel installed (it times the wheel's own binary, or
$MEMDIR_BIN):

    python bench/packages.py [--calls 200] [--process-calls 50]

Two memories: a small one (core.md and 10 notes) where a call is almost all overhead, and a year
of memory (365 daily logs of 40 lines, 200 notes, ~1.4 MB) where a search has real work to do.
For each, three calls: the Anthropic memory tool's `view` of a note, a grep `memory_search` for a
rare word, and a `memory_log` append. Prints a Markdown table of p50/p95 wall times per call.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import memdir

NOW = "2026-11-30T09:15:00Z"
WORDS = ("deploy retry payment invoice schema cache review budget latency rollout customer ticket "
         "migration index queue worker backup alert audit release").split()


def make_year(root: Path) -> None:
    """365 daily logs of 40 lines and 200 notes, deterministic."""
    (root / "log").mkdir(parents=True)
    (root / "notes").mkdir()
    (root / "core.md").write_text("# Core\n- the user prefers short answers\n")
    day = 0
    for month in range(1, 13):
        for d in range(1, 32):
            if day >= 365:
                break
            try:
                date = time.strptime(f"2025-{month:02d}-{d:02d}", "%Y-%m-%d")
            except ValueError:
                continue
            lines = [f"- {h:02d}:{m:02d} {WORDS[(day + h) % len(WORDS)]} {WORDS[(day * 7 + m) % len(WORDS)]} "
                     f"step {day}-{h}-{m} went as planned" for h, m in ((9 + i // 4, (i * 13) % 60) for i in range(40))]
            (root / "log" / time.strftime("%Y-%m-%d.md", date)).write_text("\n".join(lines) + "\n")
            day += 1
    for n in range(200):
        body = "\n".join(f"{WORDS[(n + i) % len(WORDS)]} notes line {i} for topic {n}" for i in range(30))
        (root / "notes" / f"topic-{n:03d}.md").write_text(
            f"---\nname: topic-{n:03d}\ndescription: topic {n}\n---\n{body}\n")
    (root / "notes" / "topic-100.md").write_text(
        "---\nname: topic-100\ndescription: the rare one\n---\nthe zephyrine decision was final\n")


def make_small(root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "core.md").write_text("# Core\n- the user prefers short answers\n")
    for n in range(10):
        (root / "notes" / f"topic-{n:03d}.md").write_text(f"---\nname: topic-{n:03d}\ndescription: t\n---\nline {n}\n")
    (root / "notes" / "topic-100.md").write_text("---\nname: topic-100\ndescription: r\n---\nthe zephyrine decision was final\n")


CALLS = [
    ("memory view a note", "memory", {"command": "view", "path": "/memories/notes/topic-100.md"}),
    ("memory_search grep, rare word", "memory_search", {"pattern": "zephyrine"}),
    ("memory_log append", "memory_log", {"text": "benchmark entry"}),
]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def bench(root: Path, binary: str, env: dict, calls: int, process_calls: int):
    rows = []
    full_env = {**os.environ, **env}
    with memdir.Memory(root=root, binary=binary, env=env) as mem:
        mem.context()  # start and warm up the child
        for label, tool, args in CALLS:
            for _ in range(5):
                mem.call_raw(tool, args)
            client = []
            for _ in range(calls):
                t = time.perf_counter()
                text, is_error = mem.call_raw(tool, args)
                client.append((time.perf_counter() - t) * 1000)
                assert not is_error, text
            per_process = []
            data = json.dumps(args)
            for _ in range(process_calls):
                t = time.perf_counter()
                p = subprocess.run([binary, "--root", str(root), "--source", "agent", "tool", tool], input=data,
                                   capture_output=True, text=True, env=full_env)
                per_process.append((time.perf_counter() - t) * 1000)
                assert p.returncode == 0, p.stdout + p.stderr
            rows.append((label, statistics.median(client), pct(client, 95), statistics.median(per_process),
                         pct(per_process, 95)))
    starts = []
    for _ in range(10):
        m = memdir.Memory(root=root, binary=binary, env=env)
        t = time.perf_counter()
        m.context()
        starts.append((time.perf_counter() - t) * 1000)
        m.close()
    return rows, statistics.median(starts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200, help="client calls per row")
    ap.add_argument("--process-calls", type=int, default=50, help="memdir tool processes per row")
    a = ap.parse_args()
    binary = memdir.find_memdir_bin()
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"binary: {binary} ({version}); load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        env = {"HOME": tmp, "XDG_CACHE_HOME": f"{tmp}/cache", "MEMDIR_NOW": NOW, "TZ": "UTC"}
        print("| memory | call | client p50 | client p95 | process per call p50 | p95 | ratio (p50) |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for name, make in (("small (11 files)", make_small), ("a year (565 files)", make_year)):
            root = Path(tmp) / name.split()[0]
            make(root)
            subprocess.run([binary, "--root", str(root), "init"], env={**os.environ, **env}, capture_output=True)
            rows, start = bench(root, binary, env, a.calls, a.process_calls)
            for label, c50, c95, p50, p95 in rows:
                print(f"| {name} | {label} | {c50:.2f} ms | {c95:.2f} ms | {p50:.1f} ms | {p95:.1f} ms | {p50 / c50:.0f}x |")
            print(f"| {name} | first call of a new `Memory` (start, handshake, context) | {start:.1f} ms | | | | |")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
