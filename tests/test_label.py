"""`kb label`: proposals from the notes themselves, the effect before writing, and writing
that changes no byte but the inserted lines, refuses a note changed since it was read and
never replaces a label unless --merge (which only adds keys). All through the real `kb`
command on real files, except the changed-since-read race, which needs the two steps apart.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import kb_here

from engine.notes.note import parse_note

TESTING = (
    "---\r\ntitle: x\r\n---\r\n# Testing your app\r\n\r\n"
    "Code testing matters.  Trailing space here  \r\n\r\n"
    "## Snapshot testing\r\n\r\nSnapshot tests compare screenshots. Snapshot tests use pytest.\r\n"
    "The pilot presses keys; the pilot clicks. Um café é bom.\r\n"
)


def plain_folder(root: Path) -> Path:
    """A person's own notes: no labels, no agent.txt, an index.md like many docs folders."""
    root.mkdir()
    (root / "index.md").write_text("# Home\n\nWelcome to the docs of the widget kit.\n")
    (root / "testing.md").write_bytes(TESTING.encode("utf-8"))
    (root / "scrolling.md").write_text(
        "# Scrolling\n\nHow a container scrolls its overflow.\n\n## Scroll bars\n\n"
        "Scroll bars appear when content overflows. Overflow auto shows scroll bars.\n"
    )
    (root / "layout.md").write_text(
        "# Layout\n\nWidgets are arranged by a layout.\n\n## Grid layout\n\nA grid layout places widgets in cells. "
        "Grid cells span columns.\n"
    )
    (root / "thin.md").write_text("# Colours\nSearch for: colours, theme\n\nThe theme sets colours. Colours come from the theme.\n")
    return root


def label_json(*args: str) -> dict:
    r = kb_here("label", *args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_proposals_name_their_source_and_no_key_collapses_to_one_stopword(tmp_path):
    root = plain_folder(tmp_path / "notes")
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    out = label_json(str(root))
    by = {p["note"]: p for p in out["proposals"]}
    t = by["testing.md"]
    sources = {k["source"] for k in t["keys"]}
    assert {"title", "file name", "heading"} <= sources
    assert t["keys"][0] == {"key": "testing your app", "source": "title"}
    assert t["purpose"] == "Code testing matters."
    assert by["thin.md"]["reason"] == "thin label" and by["thin.md"]["existing"] == ["colours", "theme"]
    from engine.review.labeltext import searchable

    for p in out["proposals"]:
        for k in p["keys"]:
            assert searchable(k["key"]), k
    # Without --write nothing in the folder changed.
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before


def test_write_inserts_under_the_title_and_changes_no_other_byte(tmp_path):
    root = plain_folder(tmp_path / "notes")
    original = (root / "testing.md").read_bytes()
    out = label_json(str(root), "--write", str(root / "testing.md"))
    assert out["written"] == ["notes/testing.md"], out
    new = (root / "testing.md").read_bytes()
    prop = next(p for p in out["proposals"] if p["note"] == "testing.md")
    # Under the label, the mark naming the keys nobody has read yet (engine/notes/proposal.py).
    assert prop["mark_line"].startswith("<!-- kb label proposed, not yet reviewed: ")
    inserted = ("\r\n" + prop["label_line"] + "\r\n" + prop["mark_line"] + "\r\n" + prop["purpose_line"] + "\r\n").encode()
    cut = original.index(b"# Testing your app\r\n") + len(b"# Testing your app\r\n")
    assert new == original[:cut] + inserted + original[cut:]  # every other byte where it was
    note = parse_note("testing.md", new.decode())
    assert note.is_entry and note.keys[0] == "testing your app"
    # Only the named note was written.
    assert b"Search for" not in (root / "layout.md").read_bytes()


def test_written_labels_make_the_note_a_hit(tmp_path):
    root = plain_folder(tmp_path / "notes")
    r = kb_here("route", "snapshot testing", str(root), "--json")
    assert json.loads(r.stdout)["verdict"] != "hit"
    r = kb_here("label", str(root), "--write")
    assert r.returncode == 0, r.stderr  # thin.md skipped without --merge: said, not a fault
    assert "--merge adds the proposed keys" in r.stdout.split("wrote ", 1)[1]
    a = json.loads(kb_here("route", "snapshot testing", str(root), "--json").stdout)
    assert a["verdict"] == "hit" and a["keyword_top"] == "notes/testing.md"


def test_an_existing_label_is_refused_without_merge_and_only_extended_with_it(tmp_path):
    root = plain_folder(tmp_path / "notes")
    thin = root / "thin.md"
    original = thin.read_bytes()
    r = kb_here("label", str(root), "--write", str(thin))
    assert r.returncode == 1 and "--merge" in r.stderr and str(thin) in r.stderr
    assert thin.read_bytes() == original
    r = kb_here("label", str(root), "--write", str(thin), "--merge")
    assert r.returncode == 0, r.stderr
    new = thin.read_bytes()
    line = b"Search for: colours, theme"
    assert new.startswith(b"# Colours\n" + line + b", ")  # the old keys first, as written
    rest_old = original[original.index(line) + len(line):]
    assert new.endswith(rest_old)  # the rest of the note, byte for byte
    keys = parse_note("thin.md", new.decode()).keys
    assert keys[:2] == ("colours", "theme") and len(keys) > 2


def test_a_note_changed_since_it_was_read_is_refused(tmp_path):
    from engine.notes.fleet import discover
    from engine.review.labelcli import collect, write

    root = plain_folder(tmp_path / "notes")
    proposals = collect(discover([root]))
    target = root / "layout.md"
    target.write_text(target.read_text() + "\nA line written by somebody else meanwhile.\n")
    changed = target.read_bytes()
    written, refused = write(proposals, [str(target)], merge=False)
    assert written == [] and len(refused) == 1
    assert "changed since it was read" in refused[0] and str(target) in refused[0]
    assert target.read_bytes() == changed


def test_a_symlinked_note_is_refused(tmp_path):
    root = plain_folder(tmp_path / "notes")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nA note kept elsewhere about gardening tools.\n")
    (root / "linked.md").symlink_to(outside)
    r = kb_here("label", str(root), "--write", str(root / "linked.md"))
    assert r.returncode == 1 and "symbolic link" in r.stderr
    assert outside.read_text() == "# Outside\n\nA note kept elsewhere about gardening tools.\n"


def test_the_effect_grades_gold_and_the_miss_log_before_anything_is_written(tmp_path):
    root = plain_folder(tmp_path / "notes")
    (root / "gold.tsv").write_text("snapshot testing\tnotes/testing.md\ngrid layout cells\tnotes/layout.md\n")
    from engine.review.misses import misses_path, record

    record(misses_path(root), "scroll bars overflow", [], "2026-01-01")
    before = {p.name: p.read_bytes() for p in root.glob("*.md")}
    out = label_json(str(root))
    eff = out["effect"]
    assert eff["gold_before"]["hit"] == 0 and eff["gold_after"]["hit"] == 2
    assert eff["gold_after"]["hit_right"] == 2
    changed = eff["changed"]["hit_where_the_text_leg_disagrees"] + eff["changed"]["hit_where_the_text_leg_agrees"]
    assert [h["question"] for h in changed] == ["scroll bars overflow"]
    assert changed[0]["note"] == "notes/scrolling.md"
    assert any(c["question"] == "snapshot testing" and c["from"] is None and c["to"] == "notes"
               for c in eff["owner_changes"])
    # The logged question is not attached to the note its text lands on: nobody chose it.
    assert not any(k["source"] in ("miss log", "chosen by a person") for p in out["proposals"] for k in p["keys"])
    assert {p.name: p.read_bytes() for p in root.glob("*.md")} == before
    text = kb_here("label", str(root)).stdout
    assert "hit 0 -> 2" in text and "nothing written" in text


def test_kb_label_widens_exactly_the_labels_kb_check_calls_thin(tmp_path):
    """One rule (engine/notes/thin.py): twelve keys of which two collapse to the same terms are
    eleven to the index, so W06 fires, and kb label must offer to widen that note too."""
    from engine.review.check import check

    root = tmp_path / "notes"
    root.mkdir()
    twelve = ["the widget", "widget", *(f"topic{c}" for c in "abcdefghij")]  # 12 keys, 11 terms
    (root / "dup.md").write_text("# Gadgets\nSearch for: " + ", ".join(twelve) + "\n\nGadget prose about gadgets.\n")
    wide = [f"topic{c}" for c in "abcdefghijkl"]  # 12 keys, 12 terms: not thin for either
    (root / "wide.md").write_text("# Gizmos\nSearch for: " + ", ".join(wide) + "\n\nGizmo prose about gizmos.\n")
    warned = {Path(f.path).name for f in check(root) if f.code == "W06"}
    proposed = {p["note"] for p in label_json(str(root))["proposals"] if p["reason"] == "thin label"}
    assert warned == {"dup.md"}
    assert proposed == warned


def test_an_empty_note_and_a_note_with_nothing_to_propose_each_say_so_once(tmp_path):
    # An empty note is skipped by kb index, yet kb label proposed its file name as a key; and
    # a note with nothing to propose printed "nothing to propose: nothing to propose".
    root = plain_folder(tmp_path / "vault")
    (root / "Empty note.md").write_text("")
    (root / "README.md").write_text("# My vault\n\nPersonal notes.\n")  # its words name no subject
    text = kb_here("label", str(root), "--no-effect").stdout
    empty = text.split("vault/Empty note.md", 1)[1].split("\n\n", 1)[0]
    assert "Search for:" not in empty and "nothing to propose: empty file: kb does not index it" in empty
    assert "nothing to propose: nothing to propose" not in text
    assert "vault/README.md  (no label)\n    nothing to propose: no phrase a person would type" in text
