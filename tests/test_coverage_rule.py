"""The coverage rule: a hit whose top entry holds under half the question's words is a guess."""

from __future__ import annotations

import json

from conftest import run_kb

from engine.covered import COVERAGE_FLOOR, coverage


def _route(demo, question):
    r = run_kb("route", question, str(demo), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_bait_sharing_one_key_word_is_demoted_to_a_guess(demo):
    out = _route(demo, "how do I deploy a sailboat anchor")
    assert out["verdict"] == "guess"
    # Still shown: the rule hedges, it does not hide the reading list.
    assert out["results"] and out["results"][0]["path"].endswith("deploy-checklist.md")


def test_an_answered_question_keeps_its_hit(demo):
    assert _route(demo, "quem aprova o deploy pra producao")["verdict"] == "hit"
    # A word found only in the note's text (not its label) counts as held.
    assert _route(demo, "how long should a muscle rest before training it again")["verdict"] == "hit"


def test_coverage_counts_label_words_then_asks_the_text_for_the_rest():
    asked_text = []

    def in_text(terms):
        asked_text.append(list(terms))
        return {t for t in terms if t == "anchor"}

    c = coverage(["deploy", "sailboat", "anchor", "deploy"], "Deploy readiness", in_text)
    assert (c.held, c.asked) == (2, 3)
    assert asked_text == [["sailboat", "anchor"]]
    assert c.share >= COVERAGE_FLOOR
    assert not coverage(["deploy", "sailboat", "anchor"], "deploy", lambda ts: set()).enough
    assert coverage([], "anything", lambda ts: set()).enough
