"""What a miss returns: the base's own label vocabulary spelled like the question, with its limit.

The two demo printouts are run through the real `kb` command, against a private copy of the
demo fleet, and compared with "How the Catalogue Ranks" line for line. The seed's plain
route ran the keyword scorer alone; ours runs the text scorer too, and its rows follow the
seed's printout under a line saying no label vouches for them (docs/decisions.md).
"""

from __future__ import annotations

import json
import random
import time

from conftest import kb_here

from engine import Memory
from engine.rank.normalize import terms, words
from engine.sentences import LIMIT_NOTE, NOTHING_LINES, SUGGEST_LEAD
from engine.rank.suggest import SUGGEST_MAX, SUGGEST_MIN_DICE, dice, suggest, trigrams

SEED_DECISIONI = """\
question: come funziona il registro delle decisioni
indexed:  11 entries across 3 agents, 0 aliases

  nothing matched. Either the base does not cover it, or the
  Search for lines do not carry the words a real question uses.

  the base does know these, and they look like words you used:
    technical decision
  that is spelling and not meaning, so it finds a typo or a cognate
  and never finds a translation.
"""

SEED_ROLL_BACK = """\
question: how do I roll back
indexed:  11 entries across 3 agents, 0 aliases

  nothing matched. Either the base does not cover it, or the
  Search for lines do not carry the words a real question uses.

  the base does know these, and they look like words you used:
    backup do banco, database backup, parar o scroll, stop the scroll
  that is spelling and not meaning, so it finds a typo or a cognate
  and never finds a translation.
"""


UNVOUCHED = "\n  the text scorer alone found these; no label vouches for them:\n"


def _seed_then_text_rows(printed: str, seed: str) -> None:
    """The seed's printout, to the byte, then (when the text scorer found any) its rows."""
    assert printed.startswith(seed)
    rest = printed[len(seed):]
    assert rest == "" or rest.startswith(UNVOUCHED), rest


def _route(demo, question, *extra):
    assert kb_here("index", str(demo)).returncode == 0  # so no "re-indexed" notice stands in the printout
    return kb_here("route", question, str(demo), *extra)


def test_decisioni_offers_technical_decision_with_the_two_disclaimer_lines(demo):
    r = _route(demo, "come funziona il registro delle decisioni")
    assert r.returncode == 0, r.stderr
    _seed_then_text_rows(r.stdout, SEED_DECISIONI)


def test_roll_back_offers_the_four_terms_spelled_like_roll_and_back(demo):
    r = _route(demo, "how do I roll back")
    assert r.returncode == 0, r.stderr
    _seed_then_text_rows(r.stdout, SEED_ROLL_BACK)


def test_the_demo_labels_carry_what_the_seed_says_and_rollback_is_one_word(demo):
    keys = {k for k, _ in Memory(demo).snapshot().catalogue.vocabulary_keys()}
    assert {"backup do banco", "database backup", "parar o scroll", "stop the scroll", "rollback"} <= keys
    assert "roll back" not in keys  # the question wrote it as two words; the label as one


def test_a_question_sharing_no_trigram_with_any_label_is_offered_nothing(demo):
    question = "xyzzy qwfp"
    keys = [k for k, _ in Memory(demo).snapshot().catalogue.vocabulary_keys()]
    grams = set().union(*(trigrams(w) for k in keys for w in words(k)))
    assert not any(trigrams(t) & grams for t in terms(question))  # the premise: no shared gram at all
    r = _route(demo, question, "--json")
    a = json.loads(r.stdout)
    assert a["verdict"] == "nothing" and a["suggestions"] == [] and a["miss"]["looked_like"] == []
    text = _route(demo, question).stdout
    assert NOTHING_LINES[0] in text and NOTHING_LINES[1] in text
    # Nothing offered, so nothing to disclaim: no lead line and no limit note.
    assert SUGGEST_LEAD not in text and LIMIT_NOTE[0] not in text


def test_json_carries_the_suggestions_and_the_miss_offers_the_same_words(demo):
    a = json.loads(_route(demo, "how do I roll back", "--json").stdout)
    offered = ["backup do banco", "database backup", "parar o scroll", "stop the scroll"]
    assert a["verdict"] == "nothing" and a["gate"]["served"] is False
    assert a["suggestions"] == offered
    assert a["miss"]["looked_like"] == offered and a["miss"]["recorded"] is True


def test_dice_over_trigrams_as_the_seed_measures_it():
    assert trigrams("ab") == frozenset({"ab"})  # under three characters: its own single gram
    assert dice("back", "backup") == 2 * 2 / (2 + 4)  # 0.667: just over the floor
    assert dice("roll", "scroll") == 2 * 2 / (2 + 4)
    assert dice("roll", "rollback") == 0.5  # under the floor: why `rollback` is not offered
    assert dice("decisioni", "decision") >= 0.9
    assert suggest(["back"], ["backup"]) == ["backup"]
    assert suggest(["roll"], ["rollback"]) == []


def test_at_most_eight_best_first_ties_alphabetical_and_each_key_once():
    keys = [f"deploy{c}" for c in "abcdefghij"] + ["Deploy", "deploy", "zzz"]
    out = suggest(["deploy"], keys)
    assert out[0] == "Deploy"  # 1.0 beats every 0.8; shown as written, once for both spellings
    assert len(out) == SUGGEST_MAX
    assert out[1:] == [f"deploy{c}" for c in "abcdefg"]


def test_stopwords_in_a_key_are_not_aligned_with_the_question():
    # `entre` is a stopword; `entrega` shares three of its grams (0.75) and must not reach it.
    assert dice("entrega", "entre") >= SUGGEST_MIN_DICE
    assert suggest(["entrega"], ["descanso entre treinos"]) == []
    assert suggest(["treino"], ["descanso entre treinos"]) == ["descanso entre treinos"]


def test_the_indexed_search_equals_the_plain_definition_on_random_questions(demo):
    keys = [k for k, _ in Memory(demo).snapshot().catalogue.vocabulary_keys()]

    def by_definition(q_terms):
        seen, best = set(), []
        for k in keys:
            norm = " ".join(words(k))
            if norm in seen or not terms(k):
                continue
            seen.add(norm)
            score = max(dice(q, w) for q in q_terms for w in terms(k))
            if score >= SUGGEST_MIN_DICE:
                best.append((-score, norm, " ".join(k.split())))
        return [w for _, _, w in sorted(best)[:SUGGEST_MAX]]

    vocab = sorted({w for k in keys for w in terms(k)})
    rnd = random.Random(3)
    for _ in range(500):
        q = [w[: rnd.randint(2, len(w))] + rnd.choice(["", "s", "o", "ing"]) for w in rnd.sample(vocab, 2)]
        assert suggest(q, keys) == by_definition(q), q


def test_a_large_vocabulary_is_searched_in_microseconds_not_milliseconds():
    rnd = random.Random(5)
    letters = "abcdefghijklmnopqrstuvwxyz"
    keys = [" ".join("".join(rnd.choice(letters) for _ in range(rnd.randint(4, 10))) for _ in range(2))
            for _ in range(7000)]  # about a 230-entry fleet at 30 keys each
    suggest(["rollback"], keys)  # the vocabulary is prepared once per catalogue
    t0 = time.perf_counter()
    for _ in range(200):
        suggest(["roll", "back"], keys)
    per_call = (time.perf_counter() - t0) / 200
    assert per_call < 0.002, f"{per_call * 1e6:.0f} us per call"
