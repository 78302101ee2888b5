"""`kb bench` and the pieces of the text index it measures. Runs on tiny haystacks; nothing
here asserts a speed (speed on a shared machine is reported by the bench, not tested)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import engine.index.fts5search as fts
from kbtools.bench import dist, load_questions, p95, plot
from engine.cli import main as kb
from kbtools.haystack import generate
from engine.memory import Memory
from engine.rank.stemming import stem_question


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bench") / "h240"
    generate(root, 240, seed=5, bases=2, questions=24)
    return root


def _run(capsys, *args: str) -> str:
    assert kb(["bench", *args]) == 0
    return capsys.readouterr().out


def test_bench_prints_its_table(tiny, capsys):
    out = _run(capsys, str(tiny), "--repeat", "1", "--no-bm25s", "--quiet")
    for line in ("keyword leg", "text leg (every base)", "fused answer (Memory.ask)", "bare FTS5 ORDER BY rank",
                 "fused p95 / bare p95", "pruning   above 10,000 chunks", "index     full build",
                 "no-op re-index", "kb route --json wall", "peak RSS"):
        assert line in out, line
    assert "240 chunks" in out and "24 (" in out  # the haystack's own questions.tsv


def test_bench_json_is_data(tiny, capsys):
    r = json.loads(_run(capsys, str(tiny), "--json", "--repeat", "1", "--no-fresh", "--no-index", "--quiet"))
    assert r["fleet"]["chunks"] == 240 and r["fleet"]["bases"] == 2
    assert r["questions"]["n"] == 24
    for leg in ("keyword", "text", "fused", "fts5_bare", "fts5_bare_bm25"):
        d = r["latency_ms"][leg]
        assert d["n"] == 24 and 0 <= d["median"] <= d["p95"] <= d["max"]
    assert r["ratio"]["fused_p95_to_bare_p95"] > 0
    assert r["pruning"]["bases_above"] == [] and "off" not in r["pruning"]
    assert r["machine"]["cpus"] >= 1 and len(r["machine"]["load_before"]) == 3
    if r["bm25s"]["available"]:  # the optional `bench` extra
        assert r["bm25s"]["top10_agreement"] > 0.9
    else:
        assert "pip install" in r["bm25s"]["note"]


def test_a_question_file_and_a_plot(tiny, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    qfile = tmp_path / "qs.txt"
    qfile.write_text("# comment\nvitamin cost\nzwqx kryptz\n\n", encoding="utf-8")
    saved = tmp_path / "r.json"
    saved.write_text(_run(capsys, str(tiny), "--questions", str(qfile), "--json", "--repeat", "1",
                          "--no-fresh", "--no-index", "--no-bm25s", "--quiet"), encoding="utf-8")
    assert json.loads(saved.read_text())["questions"]["n"] == 2
    png = tmp_path / "lat.png"
    out = _run(capsys, "--from", str(saved), "--plot", str(png), "--quiet")
    assert "fused answer" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_sweep_generates_measures_and_plots(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "sweep.svg"
    out = _run(capsys, "--sweep", "60,120", "--dir", str(tmp_path / "hay"), "--bases", "2", "--sweep-questions", "8",
               "--repeat", "1", "--no-fresh", "--no-index", "--no-bm25s", "--plot", str(svg), "--quiet")
    assert "growth, per haystack" in out
    assert "the text leg's engines" in out and out.count("/") > 8  # the resident leg beside FTS5, per size
    assert out.count("kb bench  ") == 2
    assert (tmp_path / "hay" / "h60-s8-b2" / "haystack.json").is_file()
    drawn = svg.read_text()
    assert drawn.lstrip().startswith("<?xml")
    assert "resident text leg, median" in drawn and "bare FTS5 (rank), p95" in drawn


def test_the_plot_draws_bm25s_and_the_fresh_process(tiny, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    run = json.loads(_run(capsys, str(tiny), "--json", "--repeat", "1", "--no-fresh", "--no-index", "--no-bm25s",
                          "--quiet"))
    # The two series come from the bm25s and fresh-process parts of a full run, skipped above
    # for time: a second size with those parts filled in from this run's own figures.
    bigger = json.loads(json.dumps(run))
    bigger["fleet"]["chunks"] *= 10
    for r in (run, bigger):
        r["bm25s"] = {"query_ms": r["latency_ms"]["resident_text"]}
        r["fresh"] = {"route_json_wall_ms": r["latency_ms"]["fused"]}
    svg = tmp_path / "growth.svg"
    plot([run, bigger], str(svg))
    drawn = svg.read_text()
    assert "bm25s in process, median" in drawn and "fresh kb route" in drawn


def test_bad_input_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no PATH is `.`, as for every verb (issue 28): here, no notes
    assert kb(["bench"]) != 0
    assert "no markdown notes here" in capsys.readouterr().err
    assert kb(["bench", "--sweep", "1k,abc"]) != 0
    assert "not a chunk count" in capsys.readouterr().err
    empty = tmp_path / "q.txt"
    empty.write_text("# nothing\n", encoding="utf-8")
    with pytest.raises(Exception, match="no questions"):
        load_questions(empty)


def test_statistics():
    assert p95([float(i) for i in range(1, 101)]) == 95.0
    assert dist([]) ["n"] == 0
    d = dist([3.0, 1.0, 2.0])
    assert (d["median"], d["max"], d["n"]) == (2.0, 3.0, 3)


# -- the index pieces the speed work added ---------------------------------------------------


def test_chunk_total_is_what_count_star_says(tiny, demo):
    for fleet in (tiny, demo):
        m = Memory(fleet)
        m.snapshot()
        for idx in m.indexes.values():
            con = idx.conn()
            assert fts.chunk_total(con) == con.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0


def test_pruning_is_off_below_the_threshold_and_on_above_it(tiny):
    m = Memory(tiny)
    m.snapshot()
    big = max(m.indexes.values(), key=lambda i: i.chunk_count())
    con = big.conn()
    total = big.chunk_count()
    assert total < fts.PRUNE_ABOVE_CHUNKS
    # Index terms a question asks as they are (a stem is its own stem in both languages): the
    # commonest are content words since the stopwords left the index, and some stem again.
    def asked_as_is(t: str) -> bool:
        return stem_question("", [t]) == [t]

    common = [t for t, d in con.execute("SELECT term, doc FROM chunks_vocab")
              if d > total * fts.PRUNE_DF_FRACTION and asked_as_is(t)]
    rare = [t for t, d in con.execute("SELECT term, doc FROM chunks_vocab WHERE doc = 1") if asked_as_is(t)][:3]
    assert common and rare
    terms = common[:3] + rare
    assert big.sent_terms(terms) == terms  # the seed's threshold: 10,000 chunks
    big.prune_above = total - 1  # one chunk over it
    assert big.sent_terms(terms) == rare
    hits, sent = big.search(terms, 50)
    assert sent == rare and hits
    big.prune_above = total
    assert big.sent_terms(terms) == terms  # "above", not "at"


def test_the_frequency_table_matches_the_probes_and_expires(tiny, tmp_path):
    m = Memory(tiny)
    m.snapshot()
    idx = max(m.indexes.values(), key=lambda i: i.chunk_count())
    con = idx.conn()
    total = fts.chunk_total(con)
    assert fts.common_terms(con, fts.averages(con)) is None  # not made below the seed's threshold
    fts.refresh_common_terms(con, 0)
    stored = fts.common_terms(con, fts.averages(con))
    probed = {t for t, d in con.execute("SELECT term, doc FROM chunks_vocab") if d > total * fts.PRUNE_DF_FRACTION}
    assert stored == probed and stored
    words = sorted(probed)[:5] + ["zwqx", "a"]
    with_table = fts.terms_to_send(con, words, 0)
    # Any change to the chunks moves FTS5's averages record: the table no longer applies,
    # and the probes (the same answer) are asked instead, until the next update restores it.
    con.execute("INSERT INTO chunks(rowid, heading_path, body, line) VALUES (?, 'x', 'zwqx words', 1)",
                ((1 << 40) + 1,))
    assert fts.common_terms(con, fts.averages(con)) is None
    con.execute("DELETE FROM chunks WHERE rowid = ?", ((1 << 40) + 1,))
    assert fts.terms_to_send(con, words, 0) == with_table
    con.execute("DELETE FROM meta WHERE key = 'common_terms'")
    assert fts.terms_to_send(con, words, 0) == with_table  # no table at all: probes
    fts.refresh_common_terms(con, 0)
    assert fts.common_terms(con, fts.averages(con)) == probed


def test_a_read_only_index_still_prunes_by_probing(tiny):
    m = Memory(tiny)
    m.snapshot()
    idx = max(m.indexes.values(), key=lambda i: i.chunk_count())
    con = idx.conn()
    fts.refresh_common_terms(con, 0)
    words = [t for t, _ in con.execute("SELECT term, doc FROM chunks_vocab ORDER BY doc DESC LIMIT 4")] + ["zwqx"]
    expected = fts.terms_to_send(con, words, 0)
    assert expected == ["zwqx"] or len(expected) < len(words)
    con.execute("DELETE FROM meta WHERE key = 'common_terms'")
    ro = sqlite3.connect(idx.path.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
    try:
        fts.refresh_common_terms(ro, 0)  # cannot write the table: says nothing, changes nothing
        assert fts.common_terms(ro, fts.averages(ro)) is None
        assert fts.terms_to_send(ro, words, 0) == expected
    finally:
        ro.close()
    fts.refresh_common_terms(con, 0)


def test_an_update_stores_the_table_only_for_a_base_that_prunes(tmp_path, monkeypatch):
    root = tmp_path / "h"
    generate(root, 200, seed=2, bases=2, questions=4)
    monkeypatch.setattr(fts, "PRUNE_ABOVE_CHUNKS", 100)  # the first base (140 chunks) prunes, the second not
    m = Memory(root)
    m.snapshot()
    made = {name: fts.common_terms(idx.conn(), fts.averages(idx.conn())) is not None for name, idx in m.indexes.items()}
    sizes = {name: idx.chunk_count() for name, idx in m.indexes.items()}
    assert made == {name: n > 100 for name, n in sizes.items()} and sorted(made.values()) == [False, True]


def test_a_fleet_without_questions_gets_them_from_its_labels(demo, capsys):
    (demo / "gold.tsv").unlink()
    (demo / "questions.tsv").unlink()  # the demo's abstention set is a question set too
    r = json.loads(_run(capsys, str(demo), "--json", "--repeat", "1", "--no-fresh", "--no-index", "--no-bm25s",
                        "--quiet"))
    assert r["questions"]["source"] == "drawn from the labels"
    assert r["questions"]["n"] >= 10 and r["latency_ms"]["fused"]["n"] == r["questions"]["n"]
    assert not (demo / "kb-misses.txt").exists() or "zwqx" not in (demo / "kb-misses.txt").read_text()


def test_a_fleet_with_no_served_question_says_the_walls_were_not_measured(tmp_path, capsys):
    # A plain vault serves no hit, so no fresh `kb route` ran: "median 0.00 ms (0 runs)" read
    # as a measurement of zero.
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, body in (("sleep", "Magnesium before bed."), ("garden", "Compost and mulch the roses.")):
        (notes / f"{name}.md").write_text(f"# {name.title()}\n\n{body}\n")
    (tmp_path / "q.tsv").write_text("magnesium before bed\t-\n")
    out = _run(capsys, str(notes), "--questions", str(tmp_path / "q.tsv"), "--repeat", "1", "--no-bm25s",
               "--no-index", "--quiet")
    assert "(0 runs" not in out
    assert "kb route --json wall: not measured: no question was served as a hit" in out
