"""The coverage rule: a hit whose top entry holds under half the question's words is a guess.

Off by default (issue 26): asked for by `--coverage-rule` or fleet.txt's `coverage_rule = on`.
"""

from __future__ import annotations

import json

from conftest import kb_here

from engine.rank.covered import COVERAGE_FLOOR, coverage


def _route(demo, question, *opts):
    r = kb_here("route", question, str(demo), "--json", "--coverage-rule", *opts)
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


def _plain(demo, question, *opts):
    r = kb_here("route", question, str(demo), "--json", *opts)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_rule_is_off_by_default_and_named_in_help(demo):
    # The seed's gate: the bait that shares `deploy` with a key is a hit, as the seed's is.
    assert _plain(demo, "how do I deploy a sailboat anchor")["verdict"] == "hit"
    boot = kb_here("boot", str(demo), "--text", stdin="how do I deploy a sailboat anchor")
    assert "(verdict hit)" in boot.stdout.splitlines()[0]
    for verb in ("route", "eval", "boot", "serve"):
        h = kb_here(verb, "--help")
        said = " ".join(h.stdout.split())  # argparse wraps the help at the terminal width
        assert h.returncode == 0 and "--coverage-rule" in said and "coverage_rule = on" in said, verb


def test_fleet_txt_turns_it_on_for_every_surface_and_refuses_a_typo(demo):
    fleet = demo / "fleet.txt"
    fleet.write_text(fleet.read_text(encoding="utf-8") + "coverage_rule = on\n", encoding="utf-8")
    assert _plain(demo, "how do I deploy a sailboat anchor")["verdict"] == "guess"
    boot = kb_here("boot", str(demo), "--text", stdin="how do I deploy a sailboat anchor")
    assert boot.returncode == 0 and "(verdict guess)" in boot.stdout.splitlines()[0]
    fleet.write_text(fleet.read_text(encoding="utf-8").replace("= on", "= maybe"), encoding="utf-8")
    r = kb_here("route", "x", str(demo))
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
    assert "fleet.txt: coverage_rule = 'maybe': write on or off" in r.stderr
