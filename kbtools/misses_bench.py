"""Benchmark: `kb misses` over a large log (issue 13, item 14). Prints figures; asserts nothing.

Builds a copy of the demo fleet in a temporary folder, writes a log of N distinct misses made
of the fleet's own key words (misspelt, split, mixed with words it does not hold, the shape of
a real log), then times review_misses (every entry re-asked and a proposal made) over a few
runs in this process, and the same log read by fresh `kb misses --json` processes.

The headline (COLD) is the fresh process: the figure a person waits for (imports, the index
opened, the resident leg built, every cache empty, the JSON written). In process, the first
run is cold too and is printed on its own; the runs after it are warm (the caches hold the
log's words) and their median is the review's own cost, never the user's wait.

    python3 -m kbtools.misses_bench [--misses 10000] [--runs 5] [--fresh 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import Memory
from engine.notes.fleet import copy_notes
from engine.review.misses import MissEntry, read_log, render_log
from engine.review.missreview import NEAR_DEFAULT, review_misses
from engine.rank.normalize import words

REPO = Path(__file__).resolve().parent.parent


def generated_log(memory, count: int, seed: int = 13) -> list[MissEntry]:
    rng = random.Random(seed)
    vocab = sorted({w for k in memory.snapshot().catalogue.keys_as_written() for w in words(k) if len(w) > 2})
    noise = ["zorbly", "quux", "frobnicate", "como", "what", "the", "de", "voor", "snarf", "kettle"]
    out, seen = [], set()
    while len(out) < count:
        parts = []
        for _ in range(rng.randint(1, 6)):
            w = rng.choice(vocab) if rng.random() < 0.6 else rng.choice(noise)
            if rng.random() < 0.3 and len(w) > 4:
                i = rng.randrange(1, len(w) - 1)
                w = w[:i] + w[i + 1:]
            parts.append(w)
        q = " ".join(parts) + f" n{len(out)}"  # distinct, as a large log's questions are
        if q not in seen:
            seen.add(q)
            out.append(MissEntry(rng.randint(1, 9), "2026-11-01", "2026-11-20", q, ""))
    return out


def mem_log(fleet: Path) -> list[MissEntry]:
    return read_log(fleet / "kb-misses.txt")


def _figures(times: list[float], n: int) -> str:
    times = sorted(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    med = statistics.median(times)
    return f"median {med:.2f} s   p95 {p95:.2f} s   ({med / n * 1e6:.0f} us per miss)"


def _row(label: str, figures: str) -> None:
    print(f"  {label:<50} {figures}")


def _fresh(fleet: Path, runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system, the child's own) of `kb misses --json` run afresh, `runs` times."""
    walls, cpus = [], []
    for _ in range(runs):
        before = os.times()
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "engine.cli", "misses", str(fleet), "--json"], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        after = os.times()
        cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return walls, cpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--fresh", type=int, default=3, help="fresh `kb misses --json` processes timed (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fleet = Path(tmp) / "demo"
        copy_notes(REPO / "examples" / "demo", fleet)
        mem = Memory(fleet)
        (fleet / "kb-misses.txt").write_text(render_log(generated_log(mem, args.misses)), encoding="utf-8")
        questions = [e.question for e in mem_log(fleet)]
        times, asks, cpu, ask_cpu = [], [], [], []
        load_before = os.getloadavg()
        for _ in range(args.runs):
            c, t = time.process_time(), time.perf_counter()
            report = review_misses(mem)  # this process's own cost, warm after the first
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
            # The floor under it: every question re-asked as review_one asks it, and nothing else.
            c, t = time.process_time(), time.perf_counter()
            for q in questions:
                mem.reask(q, text_top=NEAR_DEFAULT)
            asks.append(time.perf_counter() - t)
            ask_cpu.append(time.process_time() - c)
        assert len(report.reviews) == args.misses
        proposals = sum(1 for r in report.reviews if r.proposal)
        walls, cpus = _fresh(fleet, args.fresh) if args.fresh else ([], [])
        print(f"kb misses over {args.misses:,} distinct misses ({proposals:,} proposals):")
        # The headline is what a person waits for: a fresh process, every cache empty. The
        # in-process runs after the first are warm (the stem, fold and spelling caches full
        # of the log's words) and show the review's own cost, not the user's wait.
        if walls:
            _row(f"COLD: fresh `kb misses --json`, {len(walls)} processes, wall", _figures(walls, args.misses))
            _row("COLD: fresh process, CPU (user + system)", _figures(cpus, args.misses))
        _row("cold: first run in process", f"{times[0]:.2f} s   (CPU {cpu[0]:.2f} s)")
        if args.runs > 1:
            warm, warm_cpu = times[1:], cpu[1:]
            _row(f"warm: runs 2-{args.runs} in process, wall", _figures(warm, args.misses))
            # On a shared machine the wall time carries everyone's load; the CPU time is this
            # process's own work (user + system), the figure the load disturbs least.
            _row(f"warm: runs 2-{args.runs} in process, CPU", _figures(warm_cpu, args.misses))
        _row("re-asking alone, every run, wall", _figures(asks, args.misses))
        _row("re-asking alone, every run, CPU", _figures(ask_cpu, args.misses))
        load_after = os.getloadavg()
        print(f"  load average {load_before[0]:.2f} before, {load_after[0]:.2f} after ({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
