"""engine/review/missjson.py writes `kb misses --json`'s entries by hand in the encoder's shape: the
line must be json_line(report.to_json()) for any value a review can hold, and for values of
types the shapes do not expect (they are handed to json.dumps)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.review.misses import MissEntry
from engine.review.missjson import report_json_line
from engine.review.missreview import MissesReport, MissReview, NearFile, Proposal
from engine.render import json_line


class _Str(str):
    pass


class _Int(int):
    pass


def _proposal(similarity, score, top="ops/deploy.md"):
    return Proposal(line="roll back = rollback", alias="roll back", canonical="rollback", file="ops/deploy.md",
                    basis="spelling", similarity=similarity, verdict_with_it="hit", top_with_it=top,
                    score_with_it=score)


def _report(reviews, problems=(), not_reviewed=0):
    return MissesReport(path=Path("/x/kb-misses.txt"), exists=True, reviews=tuple(reviews),
                        problems=tuple(problems), not_reviewed=not_reviewed)


QUESTIONS = ['roll "back"', "x\\y", "ção \u202e bidi \x85 nel \x7f del", "lone \udcff surrogate", "tab\tand\nnewline",
             "", "emoji \U0001f600", "\u2028 line sep"]
NEAR = (NearFile("ops", "deploy.md", 1, ("rollback", "roll \"back\""), 3, True),
        NearFile("ops", "notes/x ç.md", None, (), None, False))


def test_every_entry_written_by_hand_is_the_encoders_line():
    reviews = []
    for i, q in enumerate(QUESTIONS):
        proposal = [None, _proposal(0.123456789, 12.3456789), _proposal(0, 1), _proposal(1e-7, 1e22, top=None)][i % 4]
        reviews.append(MissReview(MissEntry(i + 1, "2026-11-01", "2026-11-2\u202e", q, 'a "b", , c\x85'),
                                  ["nothing", "guess", "hit"][i % 3], None if i % 2 else "ops/deploy.md",
                                  NEAR[: i % 3], proposal, ("advice \"one\"", "two \x9b") if i % 2 else ()))
    for report in (_report(reviews), _report(reviews, problems=[f"p{i} \x85" for i in range(14)], not_reviewed=5),
                   _report([]), _report(reviews[:1], problems=["only"])):
        assert report_json_line(report) == json_line(report.to_json())


def test_values_the_shapes_do_not_expect_are_the_encoders_too():
    odd = [_proposal(float("nan"), float("inf")), _proposal(True, -float("inf")), _proposal(_Int(2), 0.5)]
    reviews = [MissReview(MissEntry(_Int(3) if i else True, _Str("2026-11-01"), "2026", _Str("q \x85"), ""),
                          "nothing", _Str("top"), NEAR, p, (_Str("a"),)) for i, p in enumerate(odd)]
    report = _report(reviews)
    line = report_json_line(report)
    assert line == json_line(report.to_json())
    assert json.loads(line)["entries"][0]["proposal"]["similarity"] != json.loads(line)["entries"][0]["proposal"]["similarity"]  # NaN kept
