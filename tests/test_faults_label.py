"""`kb label --write` against notes as people really have them: a byte-order mark, a setext
title (the label goes under its underline), a YAML comment in the front matter (no heading:
the label goes under the `# ` title below it), a read-only note, bytes kb does not index, a
link named on the command line, a file name holding a newline. Each is written where it
belongs or refused in one line naming the file, and nothing else changes. One real `kb label --write`
over one folder holding all of them; each test reads its own note's outcome.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from engine.notes.proposal import mark_line
from conftest import run_kb

from engine.notes.note import parse_note

NOTES = {
    # A Windows editor's note: the title is line one behind the mark.
    "bom.md": b"\xef\xbb\xbf# Gadget handbook\n\nThe gadget handbook covers gadgets.\n\n## Gadget wiring\n\n"
              b"Gadget wiring is hard. Gadget wiring again.\n",
    # Underlined title: the label goes under the underline (kb once read only `#` headings, and
    # refused it: the label would have landed under `## Rocket fuel`).
    "setext.md": b"Rocket manual\n=============\n\nRockets fly high.\n\n## Rocket fuel\n\nRocket fuel burns. Rocket fuel.\n",
    # A YAML comment is a `# ` line: kb's reader once took it for the title, and kb label refused.
    "front.md": b"---\n# yaml-language-server: $schema=x\ntitle: Boats\n---\n# Boats\n\nBoats float on water.\n",
    "readonly.md": b"# Kite flying\n\nKites fly in the wind. Kites need wind.\n",
    "latin.md": b"# Coffee\n\nCaf\xe9 prose about coffee. Coffee beans.\n",
    "binary.md": b"# Binary\n\nBin\x00ary prose about blobs.\n",
    "zeta.md": b"# Lamp care\n\nLamps glow. Lamp care matters.\n",
    "plain.md": b"# Plain garden\n\nGardens grow flowers. Garden soil.\n",
    # Lines kb's reader breaks and b"\n" does not: an old Mac's "\r", a U+2028 above the title.
    "oldmac.md": b"# Mac history\rMacs are old. Mac history is long.\r## Classic systems\rClassic systems.\r",
    "linesep.md": "Intro\u2028more\n# Page breaks\nPage breaks split pages. Page breaks.\n".encode(),
}
LINK_IN = "alpha.md"  # -> zeta.md; sorts first, so the target's proposal was the one a realpath found
LINK_ODD = "odd\nkb: forged line.md"  # a link, refused, whose name holds a newline


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    root = tmp_path_factory.mktemp("label") / "notes"
    root.mkdir()
    for name, data in NOTES.items():
        (root / name).write_bytes(data)
    os.chmod(root / "readonly.md", 0o444)
    os.symlink("zeta.md", root / LINK_IN)
    os.symlink("plain.md", root / LINK_ODD)
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    named = [str(root / n) for n in (*NOTES, LINK_IN, LINK_ODD) if n not in ("zeta.md",)]
    r = run_kb("label", str(root), "--no-effect", "--json", "--write", *named)
    out = json.loads(r.stdout)
    yield root, before, out, r.stderr
    os.chmod(root / "readonly.md", 0o644)


def refusal(out: dict, name: str) -> str:
    lines = [x for x in out["refused"] if x.split(": ")[0].endswith("/" + name)]
    assert len(lines) == 1, out["refused"]
    return lines[0]


def test_a_byte_order_mark_keeps_the_title_on_line_one(labelled):
    root, before, out, _ = labelled
    assert "notes/bom.md" in out["written"], out
    new = (root / "bom.md").read_bytes()
    prop = next(p for p in out["proposals"] if p["note"] == "bom.md")
    assert prop["title"] == "Gadget handbook" and not prop["purpose"].startswith("\ufeff")
    head = b"\xef\xbb\xbf# Gadget handbook\n"
    # Under the label, the mark naming the keys nobody has read yet (engine/notes/proposal.py).
    assert prop["mark_line"].startswith("<!-- kb label proposed, not yet reviewed: ")
    inserted = ("\n" + prop["label_line"] + "\n" + prop["mark_line"] + "\n" + prop["purpose_line"] + "\n").encode()
    assert new == head + inserted + before["bom.md"][len(head):]
    note = parse_note("bom.md", new.decode().lstrip("\ufeff"))
    assert note.is_entry and note.title == "Gadget handbook"


@pytest.mark.parametrize("name, title, eol", [("oldmac.md", b"# Mac history\r", b"\r"),
                                              ("linesep.md", "Intro\u2028more\n# Page breaks\n".encode(), b"\n")])
def test_the_label_goes_under_the_title_whatever_breaks_the_lines(labelled, name, title, eol):
    root, before, out, _ = labelled
    assert f"notes/{name}" in out["written"], out
    prop = next(p for p in out["proposals"] if p["note"] == name)
    inserted = eol + prop["label_line"].encode() + eol + prop["mark_line"].encode() + eol + prop["purpose_line"].encode() + eol
    assert (root / name).read_bytes() == title + inserted + before[name][len(title):]
    assert parse_note(name, (root / name).read_text()).is_entry


def test_merge_adds_keys_to_the_label_line_it_read_and_keeps_its_trailing_space():
    from engine.review.label import apply, propose
    from engine.review.labelstats import FleetStats
    from collections import Counter

    data = "Intro\u2028more\n# Wafers\nSearch for: wafers  \nProse.\n## Thin wafers\nThin wafers crack.\n".encode()
    p = propose("wafers.md", data, FleetStats(1, Counter(), Counter()))
    new = apply(data, p, merge=True)
    keys = ", ".join(k.key for k in p.keys).encode()
    # The person's own key `wafers` is not named by the mark; the machine's new keys are.
    mark = mark_line([k.key for k in p.keys]).encode()
    assert new == data.replace(b"Search for: wafers  \n", b"Search for: wafers, " + keys + b"  \n" + mark + b"\n")
    # Merged again onto a marked label, the one mark names every unread key, in place.
    marked = data.replace(b"Search for: wafers  \n", b"Search for: wafers  \n" + mark_line(["wafers"]).encode() + b"\n")
    again = apply(marked, propose("wafers.md", marked, FleetStats(1, Counter(), Counter())), merge=True)
    assert again.count(b"<!-- kb label proposed") == 1
    assert parse_note("wafers.md", again.decode()).unread == ("wafers",) + tuple(k.key for k in p.keys)


@pytest.mark.parametrize("name, title", [("setext.md", b"Rocket manual\n=============\n"),
                                         ("front.md", b"---\n# yaml-language-server: $schema=x\ntitle: Boats\n---\n# Boats\n")])
def test_the_label_goes_under_an_underlined_title_and_below_the_front_matter(labelled, name, title):
    root, before, out, _ = labelled
    assert f"notes/{name}" in out["written"], out
    prop = next(p for p in out["proposals"] if p["note"] == name)
    inserted = ("\n" + prop["label_line"] + "\n" + prop["mark_line"] + "\n" + prop["purpose_line"] + "\n").encode()
    assert (root / name).read_bytes() == title + inserted + before[name][len(title):]
    note = parse_note(name, (root / name).read_text())
    assert note.is_entry and note.title == prop["title"] == ("Rocket manual" if name == "setext.md" else "Boats")


@pytest.mark.parametrize("name, words", [
    ("readonly.md", "read-only"),
    ("latin.md", "not UTF-8 (byte 0xe9 at offset 13)"),
    ("binary.md", "binary, not markdown"),
    (LINK_IN, "symbolic link"),
])
def test_a_note_that_cannot_take_a_label_is_refused_by_name_and_unchanged(labelled, name, words):
    root, before, out, _ = labelled
    assert words in refusal(out, name)
    assert (root / name).read_bytes() == before[name]
    assert f"notes/{name}" not in out["written"]


def test_a_link_named_on_the_command_line_never_writes_its_target(labelled):
    root, before, out, _ = labelled
    assert (root / "zeta.md").read_bytes() == before["zeta.md"]
    assert "notes/zeta.md" not in out["written"]
    assert stat.S_ISLNK(os.lstat(root / LINK_IN).st_mode)


def test_every_refusal_is_one_line_even_for_a_name_holding_a_newline(labelled):
    _, _, out, stderr = labelled
    lines = stderr.splitlines()
    assert len(lines) == len(out["refused"]) == 5, stderr
    assert all(line.startswith("kb: ") for line in lines), stderr
    assert any("odd\\nkb: forged line.md" in line for line in lines), stderr


@pytest.mark.parametrize("name, why", [
    (b"caf\xe9.md", "file name is not valid UTF-8, so kb does not index it; rename it to label it"),
    (b"absent.md", "no such note"),
])
def test_a_note_named_for_write_without_a_proposal_is_told_why(tmp_path, name, why):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "tea.md").write_bytes(b"# Tea\n\nTea prose about leaves. Leaves.\n")
    if name != b"absent.md":
        (root / os.fsdecode(name)).write_bytes(b"# Cafe\n\nCoffee prose.\n")
    r = run_kb("label", str(root), "--no-effect", "--write", os.fsdecode(os.path.join(os.fsencode(root), name)))
    assert r.returncode == 2
    shown = os.fsdecode(os.fsencode(root)) + "/" + name.decode("utf-8", "backslashreplace").replace("\\x", "\\x")
    assert r.stderr.strip() == f"kb: {shown}: {why}"
    assert b"Search for" not in (root / "tea.md").read_bytes()  # refused before anything is written


@pytest.mark.parametrize("fifo", [False, True], ids=["linked-base", "and-a-fifo"])
def test_working_out_the_effect_writes_nothing_through_a_linked_base(tmp_path, fifo):
    # A base reached through a link (`fleet/ext -> /elsewhere/ext`): the trial copy kept the
    # link, and every proposal was written through it into the reader's own note, without
    # --write. A FIFO beside the notes made the copy fail (or wait for a writer forever).
    fleet = tmp_path / "fleet"
    (fleet / "zed").mkdir(parents=True)
    (fleet / "zed" / "index.md").write_bytes(b"# Zed home\n\nZed prose about rockets. Rockets.\n")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    note = outside / "index.md"
    note.write_bytes(b"# External home\n\nExternal prose about kites. Kites fly.\n\n## Kite strings\n\nKite strings.\n")
    before = note.read_bytes()
    os.symlink(outside, fleet / "ext")
    if fifo:
        os.mkfifo(fleet / "zed" / "pipe")
    r = run_kb("label", str(fleet), "--json", timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {p["id"] for p in out["proposals"]} == {"ext/index.md", "zed/index.md"}
    assert out["effect"] is not None and out["written"] == []
    assert note.read_bytes() == before


def test_a_gold_file_that_cannot_be_graded_costs_only_the_before_and_after(tmp_path):
    # An answer key naming a note renamed since: kb label refused wholesale (exit 2), so the
    # proposals, the point of the verb, were never shown.
    root = tmp_path / "fleet"
    (root / "zed").mkdir(parents=True)
    (root / "zed" / "index.md").write_bytes(b"# Zed home\n\nZed prose about rockets. Rockets.\n")
    (root / "gold.tsv").write_text("rockets\tzed/renamed.md\n", encoding="utf-8")
    r = run_kb("label", str(root), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [p["id"] for p in out["proposals"]] == ["zed/index.md"]
    assert out["effect"]["gold_before"] is None
    assert out["effect"]["gold_problem"] == f"{root}/gold.tsv:1: zed/renamed.md is not a note in this fleet"


@pytest.mark.parametrize("bad", ["two\nlines", "a, b", "nul\x00", "sep\u2028x"])
def test_a_key_that_would_not_read_back_is_refused_before_writing(bad):
    # The labels screen lets a person edit a key; apply() is the last gate before the bytes.
    from collections import Counter

    from engine.review.label import ProposedKey, apply, propose
    from engine.review.labelstats import FleetStats

    data = b"# Wafers\n\nThin wafers crack. Thin wafers.\n"
    p = propose("wafers.md", data, FleetStats(1, Counter(), Counter()))
    from dataclasses import replace

    with pytest.raises(ValueError, match="nothing written"):
        apply(data, replace(p, keys=(ProposedKey(bad, "title"),)), merge=False)
