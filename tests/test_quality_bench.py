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
    assert set(res) == {"text leg", "text unstemmed", "fused", "fts5 bare", "fts5 porter", "bm25s"}
    for system, (n, m) in res.items():
        assert 0.0 <= n <= 1.0 and 0.0 <= m <= 1.0, system
    # 'wings' finds 'wing' only through a stemmer: the stemmed leg ranks d2 first for q2
    # and the exact-word legs can still find it by 'flutter'; every system finds d1 for q1.
    assert res["text leg"][0] >= res["text unstemmed"][0]
    assert res["text leg"][0] > 0.9
