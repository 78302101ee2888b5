"""Faults, category 4: properties, with hypothesis. Routing is deterministic; an incremental
re-index equals a full rebuild file for file and chunk for chunk after any sequence of edits,
adds, renames and deletes; an alias can add matches and never remove one; the verdict never
depends on the order files were listed in (or bases given in)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DEMO, REPO, copy_demo, copy_notes
from engine.notes import bignote
from engine.index import indexupdate
from engine.index.indexschema import FILE_SHIFT
from engine.notes.chunking import chunk_sections
from engine.notes.fleet import discover
from engine.memory import Memory
from engine.notes.note import parse_note
from engine.notes.notefiles import read_note
from engine.index.textindex import TextIndex

SETTINGS = settings(
    max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)

GOLD = [ln.split("\t")[0] for ln in (DEMO / "gold.tsv").read_text(encoding="utf-8").splitlines()
        if ln.strip() and not ln.startswith("#")]
WORDS = ["deploy", "producao", "produção", "rollback", "schema", "ledger", "pallet", "protein", "proteina", "sono",
         "hooks", "cadence", "café", "日本語", "the", "de", "um", "review", "blocking", "musculo", "postgres", "sqlite"]
word = st.sampled_from(WORDS)
question = st.one_of(
    st.lists(word, min_size=0, max_size=8).map(" ".join),
    st.sampled_from(GOLD),
    st.text(max_size=60),
)


@pytest.fixture(scope="module")
def demo_memory(tmp_path_factory):
    """Two Memory objects over one indexed copy of the demo (built once for all examples)."""
    fleet = copy_demo(tmp_path_factory.mktemp("determinism") / "demo")
    return Memory(fleet), Memory(fleet)


@pytest.fixture(scope="module")
def alias_fleet(tmp_path_factory):
    fleet = copy_demo(tmp_path_factory.mktemp("aliases") / "demo")
    return fleet, Memory(fleet)


def _fields(a) -> dict:
    j = a.to_json()
    j.pop("reindexed", None)
    return j


@st.composite
def note_text(draw) -> str:
    parts = []
    if draw(st.integers(0, 3)) == 0:  # YAML front matter, a comment in it that is no heading
        t = " ".join(draw(st.lists(word, min_size=1, max_size=3)))
        # Plain, or quoted as YAML quotes (engine/notes/yamlscalar.py): both readers decode it alike.
        t = draw(st.sampled_from([t, f'"{t} \\"q\\" \\u00e9\\n"', f"'{t} it''s'", f'"{t}" # c', f"'{t}"]))
        parts.append("---\n# yaml comment\ntitle: " + t + "\ntags:\n  - x\n---")
    if draw(st.booleans()):
        t = " ".join(draw(st.lists(word, min_size=1, max_size=3)))
        parts.append(draw(st.sampled_from([f"# {t}", f"{t}\n" + "=" * len(t)])))
    if draw(st.integers(0, 3)):
        keys = draw(st.lists(st.lists(word, min_size=1, max_size=3).map(" ".join), max_size=4))
        parts.append(draw(st.sampled_from(["Search for: ", "**Search for:** ", "Buscar por: "])) + ", ".join(keys))
    if draw(st.booleans()):
        parts.append("Exists to: " + " ".join(draw(st.lists(word, min_size=1, max_size=5))))
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["h2", "h3", "para", "long", "link", "fence", "date", "blank", "setext", "rule"]))
        w = " ".join(draw(st.lists(word, min_size=1, max_size=12)))
        parts.append({
            "h2": f"## {w}", "h3": f"### {w} ###", "para": w, "blank": "",
            "long": "\n\n".join([w + "."] * draw(st.integers(20, 120))),  # past the 1,800-character window
            "link": f"See [{w}](../knowledge/n1.md#part) and [[n2|{w}]].",
            "fence": f"```\n# not a heading {w}\n```",
            "setext": f"{w}\n" + draw(st.sampled_from(["===", "---", "-", "  ==="])),  # "-": a list item
            "rule": f"{w}\n\n---\n- {w}\n---",  # a rule after a blank line; under a list item
            "date": "Date: 2026-01-0" + str(draw(st.integers(1, 9))),
        }[kind])
    return "\n\n".join(parts) + draw(st.sampled_from(["\n", "", "\r\n", "\n\n\n"]))


FOLDERS = ["", "knowledge/", "skills/", "tools/deep/"]
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.integers(0, 40), note_text()),
        st.tuples(st.just("edit"), st.integers(0, 999), note_text()),
        st.tuples(st.just("same-size-same-mtime"), st.integers(0, 999), st.integers(0, 10_000)),
        st.tuples(st.just("rename"), st.integers(0, 999), st.integers(0, 40)),
        st.tuples(st.just("delete"), st.integers(0, 999)),
        st.tuples(st.just("touch"), st.integers(0, 999)),
        st.tuples(st.just("break"), st.integers(0, 999)),
        st.tuples(st.just("reindex")),
        st.tuples(st.just("new-process")),
    ),
    min_size=1, max_size=25,
)


def _name(k: int) -> str:
    return f"{FOLDERS[k % len(FOLDERS)]}n{k}.md"


def _dump(idx: TextIndex) -> dict:
    """Everything the index holds about the notes, keyed by path (file ids are not content)."""
    con = idx.conn()
    out = {}
    for row in con.execute(
        "SELECT path, id, hash, is_entry, title, purpose, keys, species, label_line, label_under_title, title_line,"
        " links, date, chunks, problems FROM files ORDER BY path"
    ):
        lo = row[1] << FILE_SHIFT
        chunks = con.execute(
            "SELECT heading_path, body, line FROM chunks WHERE rowid >= ? AND rowid < ? ORDER BY rowid",
            (lo, lo + (1 << FILE_SHIFT)),
        ).fetchall()
        out[row[0]] = (row[2:], chunks)
    skipped = sorted(idx.skipped())
    searches = [idx.search(t, 50)[0] for t in (["deploy"], ["ledger", "pallet"], ["producao", "日本語", "review"])]
    return {"files": out, "skipped": skipped, "searches": searches, "chunks": idx.chunk_count()}


_NOTE = "# Deploy gate\n\nSearch for: deploy gate, producao\n\n## Steps\n\nrollback first, then schema.\n"


@SETTINGS
@given(ops=ops, streamed=st.booleans())
@example(ops=[("add", 1, _NOTE), ("reindex",), ("same-size-same-mtime", 0, 3)], streamed=False)
@example(ops=[("add", 1, _NOTE), ("reindex",), ("new-process",), ("same-size-same-mtime", 0, 7)], streamed=False)
@example(ops=[("add", 1, _NOTE), ("add", 2, _NOTE), ("reindex",), ("rename", 0, 5), ("delete", 1)], streamed=False)
@example(ops=[("add", 1, _NOTE * 40), ("reindex",), ("break", 0), ("reindex",), ("edit", 0, _NOTE)], streamed=True)
def test_incremental_reindex_equals_a_full_rebuild(ops, streamed):
    saved = bignote.STREAM_ABOVE_BYTES
    bignote.STREAM_ABOVE_BYTES = 2_000 if streamed else saved  # long notes take the two-pass reader too
    try:
        with tempfile.TemporaryDirectory() as d:
            base = Path(d) / "b"
            base.mkdir()
            (base / "agent.txt").write_text("name = b\n")
            idx = TextIndex(discover([base]).bases[0])
            idx.update()
            for op in ops:
                notes = sorted(p for p in base.rglob("*.md") if ".kb" not in p.parts)
                pick = notes[op[1] % len(notes)] if notes and len(op) > 1 and op[0] != "add" else None
                if op[0] == "add":
                    p = base / _name(op[1])
                    p.parent.mkdir(parents=True, exist_ok=True)
                    p.write_text(op[2], encoding="utf-8")
                elif op[0] == "reindex":
                    idx.update()
                elif op[0] == "new-process":
                    idx.close()
                    idx = TextIndex(discover([base]).bases[0])
                elif pick is None:
                    continue
                elif op[0] == "edit":
                    pick.write_text(op[2], encoding="utf-8")
                elif op[0] == "same-size-same-mtime":
                    # An edit a coarse clock cannot see: same size, and the old mtime put back.
                    st_ = pick.stat()
                    raw = bytearray(pick.read_bytes())
                    spots = [i for i, b in enumerate(raw) if 97 <= b <= 122]
                    if spots:
                        i = spots[op[2] % len(spots)]
                        raw[i] = 97 + (raw[i] - 97 + 1) % 26
                        pick.write_bytes(bytes(raw))
                        os.utime(pick, ns=(st_.st_atime_ns, st_.st_mtime_ns))
                elif op[0] == "rename":
                    dest = base / _name(op[2])
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    if not dest.exists():
                        pick.rename(dest)
                elif op[0] == "delete":
                    pick.unlink()
                elif op[0] == "touch":
                    os.utime(pick)
                elif op[0] == "break":
                    pick.write_bytes(pick.read_bytes() + b"\xff\xfe not utf-8")
            idx.update()
            incremental = _dump(idx)
            idx.close()

            full_base = Path(d) / "full" / "b"
            copy_notes(base, full_base)
            full = TextIndex(discover([full_base]).bases[0])
            full.update(force=True)
            rebuilt = _dump(full)
            full.close()
            assert incremental == rebuilt
    finally:
        bignote.STREAM_ABOVE_BYTES = saved


@SETTINGS
@given(text=note_text(), block=st.sampled_from([1, 2, 3, 5, 8, 64, 4096]))
def test_the_two_pass_reader_equals_the_whole_note_reader(text, block):
    """engine/notes/bignote.py against parse_note + chunk_sections, at read sizes that cut every
    character and line ending in two."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "n.md").write_text(text, encoding="utf-8", newline="")
        st_ = os.stat(root / "n.md")
        whole, raw, problem = read_note(root, "n.md", st_)
        scan = bignote.scan(root, "n.md", st_, 1 << 30, block=block)
        assert scan.problem == problem
        if problem:
            return
        note = parse_note("n.md", whole)
        assert scan.note == note.__class__(**{**note.__dict__, "sections": ()})
        want = [(c.heading_path, c.text, c.line) for c in chunk_sections(note.sections)]
        got = [(c.heading_path, c.text, c.line) for c in bignote.chunks(root, "n.md", scan, block=block)]
        assert got == want


@SETTINGS
@given(q=question)
def test_routing_is_deterministic(demo_memory, q):
    mem, twin = demo_memory
    a = mem.ask(q, record_miss=False)
    assert _fields(mem.ask(q, record_miss=False)) == _fields(a)
    assert _fields(twin.ask(q, record_miss=False)) == _fields(a)  # a second Memory on the same index


def test_routing_is_deterministic_across_processes_and_hash_seeds(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    Memory(fleet).refresh()
    outs = {}
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("KB_MISSES_PATH", None)
        outs[seed] = [
            subprocess.run([sys.executable, "-m", "engine.cli", "route", q, str(fleet), "--json", "--top", "11"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120).stdout
            for q in GOLD[:4] + ["deploy review protein hooks", "the of de um"]
        ]
    assert outs["0"] == outs["1"] == outs["12345"] and all(outs["0"])


@SETTINGS
@given(q=question, alias=st.lists(word, min_size=1, max_size=2), canonical=st.lists(word, min_size=1, max_size=3),
       extra=st.sampled_from(["", "rollback = deploy\n", "banco = database\n"]))
def test_an_alias_adds_matches_and_never_removes_one(demo_memory, alias_fleet, q, alias, canonical, extra):
    plain_mem, _ = demo_memory
    fleet, mem = alias_fleet
    (fleet / "kb-aliases.txt").write_text(f"{' '.join(alias)} = {' '.join(canonical)}\n{extra}", encoding="utf-8")
    mem.refresh()  # aliases are read with the snapshot
    without = plain_mem.ask(q, record_miss=False)
    with_alias = mem.ask(q, record_miss=False)
    kw_without = {k.id: set(k.matched) for k in without.keyword}
    kw_with = {k.id: set(k.matched) for k in with_alias.keyword}
    for ident, matched in kw_without.items():
        assert ident in kw_with, f"the alias removed {ident}"
        assert matched <= kw_with[ident], f"the alias removed matched words from {ident}"
    assert {t.id for t in without.text} <= {t.id for t in with_alias.text}
    assert set(without.terms) <= set(with_alias.terms)
    if without.verdict != "nothing":
        assert with_alias.verdict != "nothing"


@SETTINGS
@given(rnd=st.randoms(use_true_random=False), q=st.sampled_from(GOLD))
def test_the_verdict_never_depends_on_listing_order(demo_memory, rnd, q):
    """Files listed in any order (the filesystem's order is arbitrary) and bases given in any
    order build an index that routes every question the same way."""
    mem, _ = demo_memory
    truth = mem.ask(q, record_miss=False)
    real = indexupdate.list_notes

    def shuffled(root):
        found, problems = real(root)
        items = list(found.items())
        rnd.shuffle(items)
        return dict(items), problems

    bases = ["zed", "steve", "yaron"]
    rnd.shuffle(bases)
    indexupdate.list_notes = shuffled
    try:
        with tempfile.TemporaryDirectory() as d:
            fleet = copy_demo(Path(d) / "demo")
            other = Memory([fleet / b for b in bases])
            a = other.ask(q, record_miss=False)
    finally:
        indexupdate.list_notes = real
    assert a.verdict == truth.verdict and a.agent.name == truth.agent.name
    assert [(k.id, round(k.score, 9)) for k in a.keyword] == [(k.id, round(k.score, 9)) for k in truth.keyword]
    assert [r.id for r in a.results] == [r.id for r in truth.results]
    assert [(t.id, round(t.score, 9)) for t in a.text] == [(t.id, round(t.score, 9)) for t in truth.text]
