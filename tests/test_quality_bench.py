"""The quality bench's arithmetic, and a whole run on a tiny generated BEIR-layout collection."""

from __future__ import annotations

import json
import math
import subprocess
import sys

from conftest import REPO

from kbtools.quality_bench import average_precision, ndcg


def test_ndcg_by_hand():
    grades = {"a": 2, "b": 1}
    assert ndcg(["a", "b"], grades) == 1.0
    dcg = (2**1 - 1) / math.log2(2) + (2**2 - 1) / math.log2(3)
    idcg = (2**2 - 1) / math.log2(2) + (2**1 - 1) / math.log2(3)
    assert math.isclose(ndcg(["b", "a"], grades), dcg / idcg)
    assert ndcg(["x"] * 10 + ["a"], grades) == 0.0  # beyond the cutoff


def test_average_precision_by_hand():
    grades = {"a": 1, "c": 3}
    assert math.isclose(average_precision(["a", "b", "c"], grades), (1 / 1 + 2 / 3) / 2)
    assert average_precision(["b"], grades) == 0.0


def _write_collection(folder):
    docs = {
        "d1": ("Landing gear loads", "The landings of heavy aircraft load the landing gear."),
        "d2": ("Wing flutter", "Flutter of a swept wing at high speed."),
        "d3": ("Boundary layer", "Transition in the boundary layer of a flat plate."),
        "d4": ("Gear", "A gear box for a helicopter rotor."),
    }
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as f:
        for k, (t, x) in docs.items():
            f.write(json.dumps({"_id": k, "title": t, "text": x}) + "\n")
    with open(folder / "queries.jsonl", "w") as f:
        f.write(json.dumps({"_id": "q1", "text": "loads on landing"}) + "\n")
        f.write(json.dumps({"_id": "q2", "text": "flutter of swept wings"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td4\t1\nq2\td2\t2\n")


def test_a_run_prints_every_system_for_the_collection(tmp_path):
    folder = tmp_path / "tiny"
    _write_collection(folder)
    r = subprocess.run(
        [sys.executable, "-m", "kbtools.quality_bench", "--collection", str(folder), "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["tiny"]
    assert set(res) == {"text leg", "text unstemmed", "stems, whole", "fused", "fts5 bare", "fts5 porter", "bm25s"}
    for system, (n, m) in res.items():
        assert 0.0 <= n <= 1.0 and 0.0 <= m <= 1.0, system
    # 'wings' finds 'wing' only through a stemmer: the stemmed leg ranks d2 first for q2
    # and the exact-word legs can still find it by 'flutter'; every system finds d1 for q1.
    assert res["text leg"][0] >= res["text unstemmed"][0]
    assert res["text leg"][0] > 0.9


def test_nfcorpus_as_its_authors_distribute_it(tmp_path):
    """The test split's own files: tab-separated documents (title run into the text) and
    questions, TREC qrels graded 2-1-0 where grade 0 is not relevant."""
    from pathlib import Path

    from kbtools.quality_bench import load_collection, write_base

    folder = tmp_path / "nf"
    folder.mkdir()
    (folder / "test.docs").write_text(
        "MED-1\tstatin breast cancer survival cohort statins users num\n"
        "MED-2\tvitamin d deficiency bone loss\n"
        "MED-3\tcoffee consumption mortality num num\n", encoding="utf-8")
    (folder / "test.titles.queries").write_text(
        "PLAIN-1\tstatins and breast cancer\nPLAIN-2\tcoffee\nPLAIN-3\tunjudged question\n", encoding="utf-8")
    (folder / "test.2-1-0.qrel").write_text(
        "PLAIN-1\t0\tMED-1\t2\nPLAIN-1\t0\tMED-2\t1\nPLAIN-2\t0\tMED-3\t2\nPLAIN-2\t0\tMED-1\t0\n", encoding="utf-8")
    col = load_collection(folder)
    assert col.name == "nfcorpus"
    assert col.docs["MED-2"] == ("", "vitamin d deficiency bone loss")
    assert col.queries == {"PLAIN-1": "statins and breast cancer", "PLAIN-2": "coffee"}
    assert col.qrels == {"PLAIN-1": {"MED-1": 2, "MED-2": 1}, "PLAIN-2": {"MED-3": 2}}
    by_path = write_base(col, tmp_path / "base")
    # No title: the note is the text alone, no made-up heading.
    first = next(p for p, d in by_path.items() if d == "MED-1")
    assert (tmp_path / "base" / first).read_text(encoding="utf-8") == "statin breast cancer survival cohort statins users num\n"
    assert Path(first).suffix == ".md"


def test_paired_difference_and_its_interval():
    from kbtools.quality_bench import paired

    a = [0.5, 0.6, 0.7, 0.8]
    same = paired(a, a)
    assert (same.mean, same.low, same.high, same.wins, same.losses) == (0.0, 0.0, 0.0, 0, 0)
    up = paired([x + 0.1 for x in a], a)
    assert math.isclose(up.mean, 0.1) and math.isclose(up.low, 0.1) and math.isclose(up.high, 0.1)
    assert (up.wins, up.losses) == (4, 0)
    mixed = paired([1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0])
    assert mixed.mean == 0.0 and mixed.low < 0.0 < mixed.high and (mixed.wins, mixed.losses) == (2, 2)
