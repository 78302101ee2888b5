"""Bad input ends in one clear line naming the file, never a traceback, and loses nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from conftest import kb_here, run_kb


def tree_hash(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*.md"))
        if ".kb" not in p.parts
    }


def test_unreadable_notes_are_reported_and_the_rest_is_indexed(demo):
    k = demo / "zed" / "knowledge"
    (k / "latin1.md").write_bytes("# Caf\xe9\n\n**Search for:** `cafe`\n".encode("latin-1"))
    (k / "empty.md").write_bytes(b"")
    (k / "nokeys.md").write_text("# No keys\n\n**Search for:**\n\nSome prose about kettles.\n")
    before = tree_hash(demo)
    r = kb_here("index", str(demo))
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert "knowledge/latin1.md: not UTF-8 (byte 0xe9 at offset 5)" in r.stdout
    assert "knowledge/empty.md: empty file" in r.stdout
    assert "knowledge/nokeys.md: the Search for: line has no keys" in r.stdout
    a = json.loads(kb_here("route", "quem decide se um deploy pode ir pra producao", str(demo), "--json").stdout)
    assert a["verdict"] == "hit"
    assert "zed/knowledge/latin1.md: not UTF-8 (byte 0xe9 at offset 5)" in a["skipped"]
    assert "zed/knowledge/nokeys.md" in a["unreachable"]
    assert tree_hash(demo) == before  # indexing never modifies the markdown


def test_a_path_that_does_not_exist(tmp_path):
    r = run_kb("route", "anything", str(tmp_path / "nowhere"))
    assert r.returncode != 0
    assert r.stderr.strip().splitlines() == [f"kb: {tmp_path / 'nowhere'}: no such file or directory"]


def test_gold_with_the_wrong_number_of_columns(demo):
    gold = demo / "bad.tsv"
    gold.write_text("# comment\nhow much protein per meal\tyaron/knowledge/protein-basics.md\textra\n")
    r = kb_here("eval", str(gold), str(demo))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"{gold}:2: expected 2 tab-separated columns" in r.stderr


def test_gold_naming_a_file_the_fleet_does_not_hold(demo):
    gold = demo / "bad.tsv"
    gold.write_text("how much protein per meal\tyaron/knowledge/nope.md\n")
    r = kb_here("eval", str(gold), str(demo))
    assert r.returncode != 0
    assert f"{gold}:1: yaron/knowledge/nope.md is not a note in this fleet" in r.stderr


def test_a_damaged_index_is_rebuilt_and_the_answer_says_so(demo):
    kb_here("index", str(demo))
    db = demo / "zed" / ".kb" / "index.db"
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    before = tree_hash(demo)
    r = kb_here("route", "quem decide se um deploy pode ir pra producao", str(demo), "--json")
    assert r.returncode == 0, r.stderr
    a = json.loads(r.stdout)
    assert a["index_was_rebuilt"] is True
    assert a["keyword_top"] == "zed/knowledge/deploy-checklist.md" and a["verdict"] == "hit"
    plain = kb_here("route", "quem decide se um deploy pode ir pra producao", str(demo))
    assert "rebuilt" not in plain.stdout  # sound again: the next answer has nothing to say
    assert tree_hash(demo) == before


def test_a_label_not_under_the_title_does_not_make_an_entry(tmp_path):
    base = tmp_path / "b"
    base.mkdir()
    (base / "agent.txt").write_text("name = B\n")
    (base / "a.md").write_text("# Title\n\nSome prose first.\n\n**Search for:** `kettle`\n")
    (base / "c.md").write_text("# Kettle care\n\nBuscar por: `chaleira`, `kettle`\n\nDescale monthly.\n")
    a = json.loads(kb_here("route", "kettle", str(base), "--json").stdout)
    assert a["keyword_top"] == "b/c.md"
    assert "b/a.md" in a["unreachable"]


def test_a_skipped_note_that_is_deleted_leaves_the_skipped_list(demo):
    bad = demo / "zed" / "knowledge" / "broken.md"
    bad.write_bytes(b"# Broken\n\xff\xfe\n")
    first = json.loads(kb_here("route", "deploy", str(demo), "--json").stdout)
    assert any("broken.md" in s for s in first["skipped"])
    bad.unlink()
    second = json.loads(kb_here("route", "deploy", str(demo), "--json").stdout)
    assert second["skipped"] == []
