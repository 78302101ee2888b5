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


LETTERS = "abcdefghijklmnopqrstuvwxyz"
STEM = "kubernetescluster"  # 15 trigrams: with 4 letters more against 5, Dice 0.77


def alike_words(n: int, stem: str, tail: int, seed: int) -> list[str]:
    """n distinct words spelled alike: one stem and `tail` random letters (Dice about 0.75
    between any two, over the floor of 0.65: every pair must be measured by a naive search)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    while len(out) < n:
        out["".join([stem, *rng.choices(LETTERS, k=tail)])] = None
    return list(out)


def alike_fleet(root: Path, *, notes: int, keys_per_note: int) -> Path:
    """A fleet of one base whose notes carry `keys_per_note` alike keys each (the stem
    and four letters), plus a small note any question can be near."""
    base = root / "fleet" / "ops"
    (base / "knowledge").mkdir(parents=True)
    (root / "fleet" / "fleet.txt").write_text("name = Alike\n")
    (base / "agent.txt").write_text("name = Ops\nrole = operations\n")
    words = alike_words(notes * keys_per_note, STEM, 4, 7)
    for i in range(notes):
        mine = words[i * keys_per_note:(i + 1) * keys_per_note]
        (base / "knowledge" / f"alike-{i:03d}.md").write_text(
            f"# Alike {i}\n\n**Search for:** {', '.join(f'`{w}`' for w in mine)}\n\n"
            f"**Exists to:** hold alike keys\n\nkubernetes cluster notes {i}.\n")
    return root / "fleet"


def long_question(seed: int = 11, chars: int = 4000) -> str:
    """A 4,000-character question of words spelled like the keys and equal to none (the
    stem and five letters)."""
    words = alike_words(chars // 23 + 1, STEM, 5, seed)
    return " ".join(words)[:chars].rsplit(" ", 1)[0]


def case_route(tmp: Path, args) -> dict:
    keys = args.keys or 100_000
    fleet = alike_fleet(tmp, notes=100, keys_per_note=keys // 100)
    env = dict(os.environ, KB_MISSES_PATH=str(tmp / "misses.txt"))
    t_index = timed(_kb("index", str(fleet)), env=env)
    question = long_question()
    first = timed(_kb("route", question, str(fleet)), env=env)
    again = timed(_kb("route", question, str(fleet)), env=env)
    return {"case": "route", "keys": keys, "question_chars": len(question), "index_s": round(t_index[0], 2),
            "route_s": round(first[0], 2), "route_peak_mb": first[1], "route_again_s": round(again[0], 2),
            "exit": first[2]}


def case_misses(tmp: Path, args) -> dict:
    keys = args.keys or 20_000
    fleet = alike_fleet(tmp, notes=1, keys_per_note=keys)
    env = dict(os.environ, KB_MISSES_PATH=str(tmp / "misses.txt"))
    timed(_kb("index", str(fleet)), env=env)
    question = long_question()
    routed = timed(_kb("route", question, str(fleet)), env=env)
    review = timed(_kb("misses", str(fleet)), env=env)
    return {"case": "misses", "keys": keys, "question_chars": len(question), "route_s": round(routed[0], 2),
            "misses_s": round(review[0], 2), "misses_peak_mb": review[1], "exit": review[2]}


def case_remember(tmp: Path, args) -> dict:
    fleet = tmp / "demo"
    shutil.copytree(DEMO, fleet)
    size = args.keys or 700_000
    rng = random.Random(3)
    vocabulary = "deploy production rollback protein meal sleep training release window canary pipeline".split()
    claim = " ".join(rng.choice(vocabulary) + str(rng.randrange(1000)) for _ in range(size // 10))[:size]
    timed(_kb("index", str(fleet)))
    # Through Memory.remember, as kb_remember calls it: an argument of 700 KB is past what
    # exec takes (128 KB), so the claim goes on stdin.
    code = ("import sys; from engine import Memory; "
            "r = Memory([sys.argv[1]]).remember(sys.stdin.read()); print(r.to_json().get('proposal'))")
    got = timed([sys.executable, "-c", code, str(fleet)], stdin=claim.encode())
    return {"case": "remember", "claim_chars": len(claim), "remember_s": round(got[0], 2), "peak_mb": got[1],
            "exit": got[2]}


CASES: dict = {"route": case_route, "misses": case_misses, "remember": case_remember}

if __name__ == "__main__":
    sys.exit(main())
