"""Benchmark: a full index build, engine against engine, in fresh processes. Prints figures;
asserts nothing.

Each engine is a source tree (a git worktree, or `git archive` of a commit) with a mode:
`auto` builds as `kb index` does; `one` keeps the build in one process; `two` prepares the
notes in a second process whatever the load (engine/index/prepworker.py). Each engine indexes a
copy of its own of the haystack, from nothing, once per round; the engines take turns in
every round (A B C, A B C, ...), so a change in the machine's load falls on all of them.
Each build's wall time, user and system CPU (the process and its children) and peak RSS are
printed with the load average at its start; then each engine's medians and index size.

    python3 -m kbtools.build_bench /tmp/hay60k --engine main=/path/to/main \\
        --engine branch=.:one --engine branch2=.:two --rounds 3
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# Run in the engine's own folder, so `engine` is that tree's; `mode` set before the build.
_CHILD = """
import sys
mode = sys.argv[1]
if mode != "auto":
    import engine.index.indexupdate as update
    update.worker_wanted = lambda n_bytes: mode == "two"
from engine.cli import main
sys.exit(main(["index", sys.argv[2]]))
"""


@dataclass
class Build:
    wall: float
    user: float
    sys: float
    rss_mb: float
    load: float


@dataclass
class Engine:
    name: str
    src: Path
    mode: str
    copy: Path
    builds: list[Build]


def build_once(engine: Engine, python: str) -> Build:
    for kb in engine.copy.glob("*/.kb"):
        shutil.rmtree(kb)
    load = os.getloadavg()[0]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(engine.src)
    t0 = time.perf_counter()
    proc = subprocess.Popen([python, "-c", _CHILD, engine.mode, str(engine.copy)], cwd=engine.src, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if status != 0 and os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{engine.name}: the build failed ({err.strip().splitlines()[-1:]})")
    # The CPU is filled in by the caller, from RUSAGE_CHILDREN (the build and the second
    # process it reaped); the RSS is the build process's own peak.
    return Build(wall, 0.0, 0.0, usage.ru_maxrss / 1024, load)


def _children() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime, r.ru_stime


def index_bytes(copy: Path) -> int:
    return sum(f.stat().st_size for f in copy.glob("*/.kb/index.db*"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kbtools.build_bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("haystack", type=Path, help="a fleet of notes (python3 -m kbtools.haystack DIR --chunks N)")
    ap.add_argument("--engine", action="append", required=True, metavar="NAME=SRC[:MODE]",
                    help="a source tree to build with, and auto (default), one or two")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="the interpreter (default: this one)")
    ap.add_argument("--scratch", type=Path, default=None, help="where the copies go (default: a temporary folder)")
    args = ap.parse_args(argv)

    scratch = Path(tempfile.mkdtemp(prefix="kb-build-bench-", dir=args.scratch))
    engines = []
    try:
        for spec in args.engine:
            name, _, rest = spec.partition("=")
            src, _, mode = rest.partition(":")
            if mode not in ("", "auto", "one", "two"):
                ap.error(f"--engine {spec}: the mode is auto, one or two, not {mode!r}")
            copy = scratch / name
            shutil.copytree(args.haystack, copy, symlinks=True, ignore=shutil.ignore_patterns(".kb"))
            engines.append(Engine(name, Path(src).resolve(), mode or "auto", copy, []))
        print(f"{len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()} CPUs;"
              f" {args.rounds} rounds; {args.python}")
        print(f"{'round':>5} {'engine':<14} {'wall s':>7} {'user s':>7} {'sys s':>6} {'cpu s':>6} {'RSS MB':>7} {'load':>5}")
        for r in range(1, args.rounds + 1):
            for e in engines:
                before = _children()
                b = build_once(e, args.python)
                after = _children()
                # A second process is a grandchild: its CPU reaches RUSAGE_CHILDREN through
                # the build, which reaped it, so the difference holds both processes.
                b.user, b.sys = after[0] - before[0], after[1] - before[1]
                e.builds.append(b)
                print(f"{r:>5} {e.name:<14} {b.wall:7.2f} {b.user:7.2f} {b.sys:6.2f} {b.user + b.sys:6.2f}"
                      f" {b.rss_mb:7.0f} {b.load:5.1f}", flush=True)
        print()
        print(f"{'median':>5} {'engine':<14} {'wall s':>7} {'user s':>7} {'sys s':>6} {'cpu s':>6} {'RSS MB':>7}  index")
        for e in engines:
            m = lambda f: statistics.median(f(b) for b in e.builds)  # noqa: E731
            print(f"{'':>5} {e.name:<14} {m(lambda b: b.wall):7.2f} {m(lambda b: b.user):7.2f} {m(lambda b: b.sys):6.2f}"
                  f" {m(lambda b: b.user + b.sys):6.2f} {m(lambda b: b.rss_mb):7.0f}  {index_bytes(e.copy) / 1e6:.0f} MB")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
