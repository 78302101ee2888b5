"""Round 7 faults where kb writes a file of its own and the disk refuses the bytes: the
refusal is one line naming the file, as the standard for bad input asks.

Real parts only: the demo fleet indexed by the real `kb`, the tiny cross-encoder the rerank
tests import, and a file-size limit (RLIMIT_FSIZE) that makes a write fail mid-file as a
full disk does, on any machine (EFBIG where a tmpfs would give ENOSPC)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from _faults import DEPLOY_Q, kb
from conftest import REPO, index_aged
from kbtools.synth import build_tiny_model


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("model"), seed=0)


def _run_kb_with_small_files(*args: str, limit: int) -> subprocess.CompletedProcess:
    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {k: v for k, v in os.environ.items() if k != "KB_MISSES_PATH"}
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300, preexec_fn=small_files)


def test_a_rerank_stamp_the_disk_refuses_is_one_line_naming_the_stamp(demo, model):
    index_aged(demo)
    kb("route", DEPLOY_Q, str(demo))  # every cache kept: the stamp is the one file left to write
    r = _run_kb_with_small_files("route", DEPLOY_Q, str(demo), "--rerank", "--rerank-model", str(model), limit=64)
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "rerank-stamp.json" in lines[0], r.stderr
    assert not list(demo.glob("*/.kb/.rerank-stamp.json.*")), "a temporary file was left behind"
