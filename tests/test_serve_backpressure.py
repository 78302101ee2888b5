"""`kb serve` reads the next request only when there is room for its reply (issue 29 item 6).

A real `kb serve` subprocess and a client that writes kb_fleet calls and never reads: the
server used to take every line and hold every reply (1.19 GB after 70,473 calls in 60 s).
Its resident size (/proc/PID/status VmRSS) must stay flat once the pipes are full.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

from conftest import REPO

from kbtools.surface_bench import GREETING, rpc, serve_flood


def test_a_client_that_writes_and_never_reads_does_not_grow_the_server(demo):
    samples = []
    out = serve_flood(demo, 12.0, sample=lambda t, mb, n: samples.append((t, mb, n)))
    settled = [mb for t, mb, _n in samples if t >= 4.0]
    assert settled, samples
    assert max(settled) - min(settled) < 25, samples  # flat once the pipes are full, not a reply per request
    assert out["rss_mb_peak"] < 200, out
    assert samples[-1][2] < 5000, samples  # the client was made to wait: kb stopped reading


def test_replies_still_flow_to_a_client_that_reads_late(demo):
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "serve", str(demo)], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        n = 200
        payload = GREETING + b"".join(rpc(i, "tools/call", {"name": "kb_fleet", "arguments": {}}) for i in range(1, n + 1))
        os.set_blocking(proc.stdin.fileno(), False)
        view, got, buf = memoryview(payload), set(), b""
        deadline = time.monotonic() + 120
        while len(got) < n + 1 and time.monotonic() < deadline:
            want_write = [proc.stdin] if view else []
            r, w, _ = select.select([proc.stdout], want_write, [], 1.0)
            if w:
                try:
                    view = view[os.write(proc.stdin.fileno(), view[:65536]):]
                except BlockingIOError:
                    pass
            if r:
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                got.update(json.loads(ln)["id"] for ln in lines if ln.strip())
        assert got == set(range(n + 1)), sorted(set(range(n + 1)) - got)[:10]
    finally:
        proc.kill()
        proc.wait(timeout=30)
