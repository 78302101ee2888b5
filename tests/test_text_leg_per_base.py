"""docs/quality.md's account of why the text leg ranks database-choices.md first for "how
long should I rest between workouts" on the demo: the figures it quotes, measured here."""

from __future__ import annotations

import math
import sqlite3

from engine import Memory

from conftest import copy_demo

Q = "how long should I rest between workouts"


def _idf(db, term: str) -> tuple[int, int, float]:
    con = sqlite3.connect(db)
    try:
        n = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
        hits = con.execute("SELECT count(*) FROM chunks WHERE chunks MATCH ?", (term,)).fetchone()[0]
    finally:
        con.close()
    return n, hits, math.log((n - hits + 0.5) / (hits + 0.5))


def test_the_text_leg_order_is_the_per_base_statistics_the_doc_explains(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    m = Memory(fleet)
    a = m.ask(Q)
    assert a.verdict == "hit" and a.agent.name == "yaron"
    assert a.keyword[0].id == "yaron/knowledge/training-recovery.md"
    assert [(h.base, h.path) for h in a.text[:2]] == [
        ("zed", "knowledge/database-choices.md"), ("yaron", "knowledge/training-recovery.md")]
    assert (a.results[0].base, a.results[0].path) == ("yaron", "knowledge/training-recovery.md")
    scores = {}
    for base, path, n_want, hits_want in (("zed", "knowledge/database-choices.md", 17, 1),
                                          ("yaron", "knowledge/training-recovery.md", 16, 2)):
        rows, sent = m.indexes[base].search(["rest", "workouts"], 3, Q)
        assert sent == ["rest", "workout"]
        assert _idf(fleet / base / ".kb" / "index.db", "workout")[1] == 0  # only on a label
        n, hits, idf = _idf(fleet / base / ".kb" / "index.db", "rest")
        assert (n, hits) == (n_want, hits_want)
        assert rows[0][0] == path
        scores[base] = (idf, -rows[0][1])
    (zi, zs), (yi, ys) = scores["zed"], scores["yaron"]
    assert (round(zi, 3), round(zs, 3), round(yi, 3), round(ys, 3)) == (2.398, 2.853, 1.758, 2.565)
    assert round(zs / zi, 2) == 1.19 and round(ys / yi, 3) == 1.459
    assert yi * (zs / zi) < ys  # under yaron's statistics the database chunk comes second
