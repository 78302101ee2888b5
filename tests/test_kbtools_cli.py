"""Every script in kbtools/ answers `--help` with its usage, and a bad path with one line.

A stranger runs `python3 -m kbtools.X --help` before anything else: two of them took it as a
folder or a number and printed a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import REPO

SCRIPTS = sorted(p.stem for p in (REPO / "kbtools").glob("*.py")
                 if 'if __name__ == "__main__"' in p.read_text(encoding="utf-8"))


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_usage_and_runs_nothing(script):
    p = _run(f"kbtools.{script}", "--help")
    assert p.returncode == 0, p.stderr
    assert "usage:" in p.stdout and "Traceback" not in p.stderr


def test_the_label_bench_names_a_missing_corpus_in_one_line(tmp_path):
    missing = tmp_path / "no-such-docs"
    p = _run("kbtools.benchmark_labels", str(missing))
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and str(missing) in p.stderr
    assert len(p.stderr.strip().splitlines()) <= 3  # argparse's usage line and the error
