"""The miss log and `kb misses` as people really use them: a log line typed in another
encoding survives the next miss byte for byte, and `kb misses | head` is not an error.
Real `kb` processes on a copy of the demo."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO, run_kb


def test_bytes_that_are_not_utf8_in_the_log_survive_the_next_miss(demo):
    log = demo / "kb-misses.txt"
    typed = b"2\t2026-01-01\t2026-01-02\tcaf\xe9 com leite\n    looked like: (nothing)\n"
    log.write_bytes(typed)
    r = run_kb("route", "zebra unicorn telescope", str(demo))
    assert r.returncode in (0, 1), r.stderr
    after = log.read_bytes()
    assert b"zebra unicorn telescope" in after  # the new miss was logged
    assert typed in after  # and the old line kept its byte (was U+FFFD from then on)


def test_a_reader_that_stops_early_is_not_an_error(demo):
    # Output well past a pipe's 64 KiB, so the write meets the closed pipe.
    lines = [f"1\t2026-01-01\t2026-01-01\tquestion {i} {'zebra ' * 300}\n" for i in range(40)]
    (demo / "kb-misses.txt").write_text("".join(lines), encoding="utf-8")
    p = subprocess.Popen([sys.executable, "-m", "engine.cli", "misses", str(demo)], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = p.stdout.read(20)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert first.startswith(b"misses:") and err == ""
