"""kb-aliases.txt: what a miss earns. Additive, one code path to both scorers, counted when in force."""

from __future__ import annotations

import json

from conftest import run_kb

from engine import Memory
from engine.notes.aliases import Alias, expand, load_aliases, read_aliases

MISSED = "how do I roll back"
DEPLOY = "zed/knowledge/deploy-checklist.md"


def _route_json(demo, question):
    r = run_kb("route", question, str(demo), "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_roll_back_alias_makes_the_miss_a_hit_and_removing_it_restores_the_miss(demo):
    aliases = demo / "kb-aliases.txt"
    before = _route_json(demo, MISSED)
    assert before["verdict"] == "nothing" and before["indexed"]["aliases"] == 0

    aliases.write_text("# earned by a real miss\nroll back = rollback\n")
    hit = _route_json(demo, MISSED)
    assert hit["verdict"] == "hit" and hit["gate"]["served"] is True
    assert hit["keyword_top"] == DEPLOY and hit["agent"]["name"] == "zed"
    assert hit["indexed"]["aliases"] == 1
    assert hit["miss"] is None and hit["suggestions"] == []

    text = run_kb("route", MISSED, str(demo)).stdout
    assert "indexed:  11 entries across 3 agents, 1 alias" in text.splitlines()
    assert f"   1.  11.23  {DEPLOY}" in text and "matched: rollback" in text

    aliases.write_text("# earned by a real miss\n")
    again = _route_json(demo, MISSED)
    assert again["verdict"] == "nothing" and again["keyword_top"] is None and again["indexed"]["aliases"] == 0
    assert again["suggestions"] == before["suggestions"]


def test_indexed_aliases_counts_only_the_lines_in_force(demo):
    (demo / "kb-aliases.txt").write_text(
        "# comment\n\nroll back = rollback\nno equals sign here\nthe = of\ndormir = sono   # trailing comment\n"
    )
    a = _route_json(demo, MISSED)
    assert a["indexed"]["aliases"] == 2
    aliases, problems = read_aliases(demo / "kb-aliases.txt")
    assert [(x.alias, x.canonical, x.line) for x in aliases] == [
        (("roll", "back"), ("rollback",), 3), (("dormir",), ("sono",), 6),
    ]
    assert problems == [(4, "not `alias = canonical`"), (5, "an alias or canonical made only of stopwords")]
    assert load_aliases(demo / "kb-aliases.txt")[1][0] == f"{demo / 'kb-aliases.txt'}:4: not `alias = canonical`"


def test_expansion_is_additive_the_original_words_always_survive():
    segments = expand(["roll", "back", "deploy"], [Alias(("roll", "back"), ("rollback",), 1)])
    assert segments == [["roll", "back", "deploy"], ["rollback"]]
    # An alias matches whole terms only: `roll` alone calls nothing in.
    assert expand(["roll"], [Alias(("roll", "back"), ("rollback",), 1)]) == [["roll"]]


def test_a_wrong_alias_adds_noise_and_removes_no_signal(demo):
    q = "quem decide se um deploy pode ir pra producao"
    plain = Memory(demo).ask(q, record_miss=False)
    (demo / "kb-aliases.txt").write_text("deploy = hook\n")  # wrong on purpose
    noisy = Memory(demo).ask(q, record_miss=False)
    assert noisy.keyword_top == plain.keyword_top == DEPLOY
    assert noisy.keyword[0].score == plain.keyword[0].score  # the original words scored as before
    assert "hook" in noisy.terms and "deploy" in noisy.terms


def test_an_alias_reaches_both_scorers_through_one_path(demo):
    # `rehearsed` is in the deploy checklist's prose and on no label: only the text scorer sees it.
    q = "zqxv"
    without = Memory(demo).ask(q, record_miss=False)
    assert DEPLOY not in [h.id for h in without.text]
    (demo / "kb-aliases.txt").write_text("zqxv = rehearsed\n")
    mem = Memory(demo)
    with_it = mem.ask(q, record_miss=False)
    assert "rehearsed" in with_it.terms
    assert DEPLOY in [h.id for h in with_it.text]  # the text leg saw the canonical
    # and the keyword leg sees the same expansion
    (demo / "kb-aliases.txt").write_text("zqxv = rollback\n")
    assert mem.keyword_only(q)[0].id == DEPLOY
    assert mem.ask(q, record_miss=False).keyword_top == DEPLOY


def test_a_long_lived_memory_sees_a_line_added_and_removed(demo):
    mem = Memory(demo)
    assert mem.ask(MISSED, record_miss=False).verdict == "nothing"
    g0 = mem.snapshot().generation
    (demo / "kb-aliases.txt").write_text("roll back = rollback\n")
    a = mem.ask(MISSED, record_miss=False)
    assert a.verdict == "hit" and a.keyword_top == DEPLOY and a.indexed.aliases == 1
    assert mem.snapshot().generation > g0  # an ordering built against other aliases is a new generation
    (demo / "kb-aliases.txt").unlink()
    b = mem.ask(MISSED, record_miss=False)
    assert b.verdict == "nothing" and b.indexed.aliases == 0


def test_what_if_an_alias_line_were_in_force_without_writing_it(demo):
    mem = Memory(demo)
    line = Alias(("roll", "back"), ("rollback",), 0)
    assert mem.keyword_only(MISSED) == []
    assert mem.keyword_only(MISSED, extra_aliases=(line,))[0].id == DEPLOY
    assert not (demo / "kb-aliases.txt").exists()
    assert mem.keyword_only(MISSED) == []  # nothing stuck
