"""`kb remember`: ADD, UPDATE or NOOP with the passage as evidence; new notes written whole, never over one."""

from __future__ import annotations

import json

import pytest
from conftest import run_kb

from engine import KbError, Memory
from engine.review.remember import NOOP_AT, PROPOSALS, UPDATE_AT, note_text

COPIED = "For a 70 kg person that is about 25 to 30 grams per meal"  # yaron/knowledge/protein-basics.md
NEW_FACT = "Creatine monohydrate at 3 to 5 grams a day is the best studied supplement"
CHANGED = "For a 70 kg person that is about 35 to 40 grams per meal"


def test_a_sentence_copied_from_a_note_is_a_noop_with_its_passage(demo):
    assert COPIED in (demo / "yaron/knowledge/protein-basics.md").read_text().replace("\n", " ")
    p = run_kb("remember", COPIED, str(demo / "yaron"))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[2] == f"proposal:  NOOP  (containment 1.00; NOOP at >= {NOOP_AT:.2f}, UPDATE at >= {UPDATE_AT:.2f})"
    assert "  1.00  yaron/knowledge/protein-basics.md  (Protein: the daily target, and how to split it > Per meal)" in lines
    assert "        missing: -" in lines
    assert "DELETE is never proposed" in p.stdout


def test_a_new_fact_is_an_add(demo):
    r = Memory(demo).remember(NEW_FACT)
    assert r.proposal == "ADD" and r.containment < UPDATE_AT
    assert r.written is None
    p = run_kb("remember", NEW_FACT, str(demo), "--json")
    assert json.loads(p.stdout)["proposal"] == "ADD"


def test_the_same_fact_with_a_new_number_is_an_update_naming_what_it_adds(demo):
    r = Memory(demo).remember(CHANGED)
    assert r.proposal == "UPDATE"
    assert UPDATE_AT <= r.containment < NOOP_AT
    assert r.evidence[0].id == "yaron/knowledge/protein-basics.md"
    assert r.evidence[0].missing == ("35", "40")
    assert "the claim adds: 35, 40" in r.reason


def test_it_never_proposes_delete(demo):
    assert PROPOSALS == ("ADD", "UPDATE", "NOOP")
    m = Memory(demo)
    for claim in (COPIED, NEW_FACT, CHANGED, "Protein is not needed at all, ignore the 1.6 grams per kilo target"):
        assert m.remember(claim).proposal in PROPOSALS


def test_write_creates_the_note_indexes_it_and_a_second_write_refuses(demo):
    note = demo / "yaron" / "knowledge" / "creatine.md"
    args = ("remember", NEW_FACT, str(note), "--write", "--key", "creatine dose", "--key", "creatina",
            "--purpose", "Say how much creatine to take and why")
    first = run_kb(*args)
    assert first.returncode == 0, first.stderr
    assert "wrote:     yaron/knowledge/creatine.md (indexed, an entry)" in first.stdout
    text = note.read_text()
    lines = text.splitlines()
    assert lines[0] == "# Creatine monohydrate at 3 to 5 grams a day is the best studied supplement"
    assert lines[2] == "**Search for:** `creatine dose`, `creatina`"
    assert lines[4] == "**Exists to:** Say how much creatine to take and why"
    assert NEW_FACT in text
    route = run_kb("route", "qual a creatine dose", str(demo), "--json")
    assert json.loads(route.stdout)["keyword_top"] == "yaron/knowledge/creatine.md"
    assert not [f for f in note.parent.iterdir() if f.name.endswith(".tmp")]  # the temporary file is gone

    second = run_kb("remember", "something else entirely", str(note), "--write", "--key", "other")
    assert second.returncode == 2
    assert second.stderr.strip() == "kb: yaron/knowledge/creatine.md: already exists; kb remember never overwrites a note"
    assert note.read_text() == text


def test_write_without_a_key_refuses_and_writes_nothing(demo):
    note = demo / "zed" / "knowledge" / "new.md"
    p = run_kb("remember", NEW_FACT, str(note), "--write")
    assert p.returncode == 2
    assert p.stderr.strip() == ("kb: --write needs at least one --key: a note without a Search for: line is one no "
                                "question can reach")
    assert not note.exists()


def test_write_refuses_paths_it_should_not_create(demo, tmp_path):
    m = Memory(demo)
    outside = tmp_path / "elsewhere.md"
    with pytest.raises(KbError, match=r"elsewhere\.md: outside the bases this was started with"):
        m.remember(NEW_FACT, outside, write=True, keys=["x"])
    with pytest.raises(KbError, match=r"zed/\.\./\.\./escape\.md: outside the bases"):
        m.remember(NEW_FACT, "zed/../../escape.md", write=True, keys=["x"])
    with pytest.raises(KbError, match="a note is a .md file"):
        m.remember(NEW_FACT, "zed/knowledge/notes.txt", write=True, keys=["x"])
    with pytest.raises(KbError, match="hidden folder"):
        m.remember(NEW_FACT, "zed/.kb/sneaky.md", write=True, keys=["x"])
    with pytest.raises(KbError, match="cannot hold a comma"):
        m.remember(NEW_FACT, "zed/knowledge/k.md", write=True, keys=["a, b"])
    assert not outside.exists() and not (demo.parent / "escape.md").exists()
    assert not (demo / "zed/knowledge/notes.txt").exists() and not (demo / "zed/knowledge/k.md").exists()


def test_write_through_a_base_relative_path_in_the_library(demo):
    r = Memory(demo).remember(NEW_FACT, "yaron/tools/creatine.md", write=True, keys=["creatine"])
    assert (r.written, r.indexed, r.proposal) == ("yaron/tools/creatine.md", True, "ADD")
    assert (demo / "yaron/tools/creatine.md").is_file()


def test_an_empty_claim_is_one_line(demo):
    p = run_kb("remember", "the of and", str(demo))
    assert p.returncode == 2
    assert p.stderr.strip() == "kb: 'the of and': the claim has no words that carry meaning, so there is nothing to measure"


def test_note_text_puts_the_label_directly_under_the_title():
    t = note_text("One fact. And more.", ["k"], date="2026-01-02")
    assert t == ("# One fact\n\n**Search for:** `k`\n\n**Exists to:** One fact.\n\nUpdated: 2026-01-02\n\n"
                 "One fact. And more.\n")
