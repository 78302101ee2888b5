"""Round 5 faults in `kb label` (engine/label.py): a note the indexer reads that the label
writer could not. Real parts: a fleet in tmp, the real `kb` in a subprocess."""

from __future__ import annotations

from pathlib import Path

from _faults import kb

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
