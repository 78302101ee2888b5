"""Round 7: a process short of file descriptors (`ulimit -n 32`) over a fleet of 50 bases.

`kb misses` over a long log holds the text leg in memory, built base by base in the
background. Real parts only: a generated fleet of 50 bases indexed by the real `kb`, a log of
real questions, and the real `kb misses` in a subprocess whose descriptor limit is set
before it starts (RLIMIT_NOFILE, as `ulimit -n` sets it)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _faults import kb
from conftest import REPO
from engine.review import missreview

BASES = 50
FEW_DESCRIPTORS = 32


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Path:
    """50 bases, indexed, with a miss log long enough for the review to hold the text leg in
    memory (missreview.RESIDENT_FROM_MISSES), of the haystack's own questions."""
    root = tmp_path_factory.mktemp("fleet") / "h50"
    subprocess.run([sys.executable, "-m", "kbtools.haystack", str(root), "--chunks", "3000", "--bases", str(BASES)],
                   cwd=REPO, check=True, capture_output=True, timeout=300)
    kb("index", str(root))
    questions = [line.split("\t")[0] for line in (root / "questions.tsv").read_text().splitlines()
                 if line and not line.startswith("#")]
    entries = []
    for k in range(missreview.RESIDENT_FROM_MISSES + 10):
        entries.append(f"1\t2026-11-01\t2026-11-02\t{questions[k % len(questions)]} n{k}\n    looked like: (nothing)\n")
    (root / "kb-misses.txt").write_text("".join(entries))
    return root


def _misses(fleet: Path, descriptors: int | None) -> tuple[subprocess.CompletedProcess, float]:
    def few():
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    env = {k: v for k, v in os.environ.items() if k != "KB_MISSES_PATH"}
    started = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "engine.cli", "misses", str(fleet), "--json"], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=600, preexec_fn=few if descriptors else None)
    return r, time.monotonic() - started


def test_kb_misses_short_of_descriptors_over_50_bases_reviews_as_with_enough(fleet):
    expected, _ = _misses(fleet, None)
    assert expected.returncode == 0, expected.stderr[-2000:]
    got, seconds = _misses(fleet, FEW_DESCRIPTORS)
    assert "Traceback" not in got.stderr, got.stderr[-3000:]
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout == expected.stdout  # the same reviews: no base's text leg lost
    # Each base's text leg built in turn, never waited on past its build: the review took
    # 126 s here when a build that failed was waited for until the two-minute bound.
    assert seconds < 60, f"kb misses took {seconds:.0f} s with {FEW_DESCRIPTORS} descriptors"
