"""Round 5 faults in `kb label` (engine/review/label.py): a note the indexer reads that the label
writer could not. Real parts: a fleet in tmp, the real `kb` in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _faults import kb
from conftest import REPO

BOM = b"\xef\xbb\xbf"


def test_a_note_opening_with_two_byte_order_marks_is_labelled_as_the_index_reads_it(tmp_path: Path):
    # An editor that adds a BOM to a file already holding one as text: the indexer drops every
    # leading BOM and reads the title; the label writer must find the same title line.
    ana = tmp_path / "fleet" / "ana"
    ana.mkdir(parents=True)
    (ana / "agent.txt").write_text("name: ana\n", encoding="utf-8")
    body = b"# Ledger reconciliation\n\nHow the monthly ledger is reconciled against the bank statement.\n"
    note = ana / "ledger.md"
    note.write_bytes(BOM + BOM + body)
    kb("label", str(tmp_path / "fleet"), "--write")
    written = note.read_bytes()
    assert written.startswith(BOM + BOM + b"# Ledger reconciliation\n\nSearch for: "), written[:120]
    assert written.endswith(body[len(b"# Ledger reconciliation\n"):])
    indexed = kb("index", str(tmp_path / "fleet")).stdout
    assert "1 entries" in indexed, indexed


def test_kb_label_does_not_read_a_note_the_index_skips_as_too_large(tmp_path: Path):
    # A generated 1 GB markdown file in a docs folder: the index skips it by its size unread;
    # kb label read it whole (and decoded it: more again), a MemoryError under a memory limit.
    ana = tmp_path / "fleet" / "ana"
    ana.mkdir(parents=True)
    (ana / "agent.txt").write_text("name: ana\n", encoding="utf-8")
    (ana / "ledger.md").write_text("# Ledger\n\nHow the ledger is reconciled monthly.\n", encoding="utf-8")
    with open(ana / "huge.md", "wb") as f:
        f.truncate(1 << 30)  # sparse: no disk used
    limit = 900 * 1024 * 1024  # address space: far more than kb needs, less than the file
    code = ("import resource, runpy, sys\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
            "sys.argv = ['kb'] + sys.argv[1:]\nrunpy.run_module('engine.cli', run_name='__main__')\n")
    r = subprocess.run([sys.executable, "-c", code, "label", str(tmp_path / "fleet"), "--no-effect"],
                       capture_output=True, text=True, timeout=300, cwd=REPO)
    assert "MemoryError" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-1500:]
    assert r.returncode == 0 and "ana/ledger.md" in r.stdout, r.stdout[-1500:]
