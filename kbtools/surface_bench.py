"""The surfaces a stranger can reach, timed and weighed (issue 29 items 6, 8, 9, 11).

    python3 -m kbtools.surface_bench serve    # kb serve, a client that writes and never reads
    python3 -m kbtools.surface_bench misses   # kb misses, one 4,000-character question, 20,000 alike keys
    python3 -m kbtools.surface_bench route    # a refused kb route of that question over 100,000 alike keys
    python3 -m kbtools.surface_bench remember # kb remember of a 700 KB claim

Each case runs the real `kb` in a subprocess of this checkout and prints its wall time and
the peak resident size (VmHWM, or VmRSS sampled for kb serve). The data is made here, from a
fixed seed, in a temporary folder: the shapes the issue's attacker used.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo"


def _kb(*args: str, **kw) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *args]


def vm(pid: int, field: str) -> int:
    """A /proc/PID/status size in KB (VmRSS, VmHWM); 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def timed(argv: list[str], *, cwd: Path = REPO, env: dict | None = None, stdin: bytes | None = None) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in MB (VmHWM sampled until exit) and the exit status."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    if stdin is not None:
        threading.Thread(target=lambda: (proc.stdin.write(stdin), proc.stdin.close()), daemon=True).start()
    else:
        proc.stdin.close()
    peak = 0
    while proc.poll() is None:
        peak = max(peak, vm(proc.pid, "VmHWM"))
        time.sleep(0.05)
    return time.perf_counter() - t0, peak // 1024, proc.returncode


# -- item 6 --------------------------------------------------------------------------------


def rpc(i: int, method: str, params: dict | None = None) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params or {}}) + "\n").encode()


GREETING = (rpc(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "0"}})
            + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')


def serve_flood(fleet: Path, seconds: float, *, sample=None) -> dict:
    """kb serve with a client that writes kb_fleet calls for `seconds` and reads nothing."""
    proc = subprocess.Popen(_kb("serve", str(fleet)), cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    written = [0]
    stop = threading.Event()

    def flood():
        try:
            os.write(proc.stdin.fileno(), GREETING)
            i = 1
            while not stop.is_set():
                batch = b"".join(rpc(i + k, "tools/call", {"name": "kb_fleet", "arguments": {}}) for k in range(100))
                view = memoryview(batch)
                while view and not stop.is_set():
                    view = view[os.write(proc.stdin.fileno(), view):]  # blocks once kb stops reading
                i += 100
                written[0] = i
        except OSError:
            pass

    writer = threading.Thread(target=flood, daemon=True)
    # A blocking write must not outlive the bench: stdin is non-blocking-safe via the stop flag
    # and the process kill below.
    t0 = time.monotonic()
    writer.start()
    rss = []
    while time.monotonic() - t0 < seconds:
        time.sleep(0.5)
        rss.append(vm(proc.pid, "VmRSS") // 1024)
        if sample:
            sample(time.monotonic() - t0, rss[-1], written[0])
    stop.set()
    proc.kill()
    proc.wait(timeout=30)
    writer.join(timeout=10)
    return {"seconds": seconds, "requests_written": written[0], "rss_mb_first": rss[0], "rss_mb_last": rss[-1],
            "rss_mb_peak": max(rss)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kbtools.surface_bench")
    p.add_argument("case", choices=["serve", "misses", "route", "remember"])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--keys", type=int)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kb-surface-") as tmp:
        tmp = Path(tmp)
        os.environ.setdefault("KB_STATE_DIR", str(tmp / "state"))
        if args.case == "serve":
            fleet = tmp / "demo"
            shutil.copytree(DEMO, fleet)
            out = serve_flood(fleet, args.seconds,
                              sample=lambda t, mb, n: print(f"  {t:5.1f} s  {mb:5d} MB  {n:7d} requests written", flush=True))
        else:
            out = CASES[args.case](tmp, args)
        print(json.dumps(out))
    return 0


CASES: dict = {}

if __name__ == "__main__":
    sys.exit(main())
