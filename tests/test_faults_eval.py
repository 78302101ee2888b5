"""`kb eval` against answer keys as people paste them: a U+2028 or NEL inside a question (text
copied from a web page) is part of the question, and a refusal names the line an editor
shows; a count of asks that measures nothing is refused. Real `kb` on a copy of the demo."""

from __future__ import annotations

import json

import pytest
from conftest import run_kb

PROTEIN = "yaron/knowledge/protein-basics.md"


@pytest.mark.parametrize("inside", ["\u2028", "\x85", "\x0c"])
def test_a_line_separator_inside_a_question_keeps_it_one_question(demo, tmp_path, inside):
    gold = tmp_path / "gold.tsv"
    gold.write_text(f"how much{inside}protein per meal\t{PROTEIN}\nme conta uma piada\t-\n", encoding="utf-8")
    r = run_kb("eval", str(gold), str(demo), "--json")
    assert r.returncode == 0, r.stderr
    qs = json.loads(r.stdout)["questions"]
    assert [q["line"] for q in qs] == [1, 2]
    assert qs[0]["question"] == f"how much{inside}protein per meal" and qs[0]["file_ok"]


def test_a_refusal_names_the_line_an_editor_shows(demo, tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text(f"how much\u2028protein\t{PROTEIN}\r\nq\tyaron/no-such-note.md\r\n", encoding="utf-8")
    r = run_kb("eval", str(gold), str(demo), "--no-speed")
    assert r.returncode == 2
    assert r.stderr.strip() == f"kb: {gold}:2: yaron/no-such-note.md is not a note in this fleet"


@pytest.mark.parametrize("asks", ["0", "-5"])
def test_a_count_of_asks_that_measures_nothing_is_refused(demo, asks):
    r = run_kb("eval", str(demo / "gold.tsv"), str(demo), "--asks", asks)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"kb: --asks {asks}: give a count of asks, 1 or more"


@pytest.mark.parametrize("asks", ["100000000000000000000", "100001"])
def test_a_count_of_asks_no_one_would_wait_for_is_refused(demo, asks):
    # Before the bound, the SPEED block ran the set 10**20 / 7 times: the process never ended
    # (10,000 asks on the demo take about 7 s, so the bound is about a minute there).
    r = run_kb("eval", str(demo / "gold.tsv"), str(demo), "--asks", asks, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"kb: --asks {asks}: at most 100,000 asks (a median is steady long before)"


def test_a_count_of_asks_written_as_a_float_is_refused_by_the_parser(demo):
    r = run_kb("eval", str(demo / "gold.tsv"), str(demo), "--asks", "1e20", timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert "argument --asks: invalid int value: '1e20'" in r.stderr
