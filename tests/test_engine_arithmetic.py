"""The arithmetic of seed 000, pinned: floor, idf, fusion, normalisation, phrases, best chunk."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine import Memory
from engine.catalogue import W_KEYWORD, W_PHRASE, Catalogue, idf_unique, make_entry
from engine.gate import FLOOR_CALIBRATED_AT, MIN_ENTRIES_TO_ROUTE, SCORE_FLOOR, floor_for, verdict_for
from engine.normalize import fold, terms
from engine.rrf import RRF_K, rrf


def test_floor_is_calibrated_at_226_entries():
    assert round(floor_for(FLOOR_CALIBRATED_AT), 4) == SCORE_FLOOR == 17.5
    assert round(floor_for(11), 4) == 6.9162


@pytest.mark.parametrize("n, expected", [(1, 0.41), (4, 1.10), (11, 1.87), (226, 4.74), (1000, 6.22)])
def test_idf_unique_at_the_seed_sizes(n, expected):
    assert round(idf_unique(n), 2) == expected


def test_floor_grows_with_the_fleet():
    floors = [floor_for(n) for n in (2, 4, 11, 226, 1000)]
    assert floors == sorted(floors)


def test_rrf_ties_two_files_each_first_on_one_list():
    fused = rrf(["a", "b"], ["b", "a"])
    assert RRF_K == 60
    scores = {ident: s for ident, s, _ in fused}
    assert scores["a"] == scores["b"] == pytest.approx(1 / 61 + 1 / 62)
    # The keyword list (the first) decides between files the fusion cannot separate.
    assert [f[0] for f in fused] == ["a", "b"]


def test_accents_fold_into_one_word():
    assert terms("produção") == terms("producao") == ["producao"]
    assert fold("Atenção") == "atencao"


def test_stopwords_and_one_letter_words_are_dropped():
    assert terms("quem decide se um deploy pode ir pra produção?") == ["decide", "deploy", "producao"]
    assert terms("how much protein per meal") == ["protein", "meal"]
    assert terms("e o a i") == []


def _entry(path, keys, title="Untitled note", purpose=""):
    return make_entry("b", path, title, purpose, "memory", tuple(keys))


def test_a_whole_phrase_key_scores_before_its_words():
    cat = Catalogue([
        _entry("x/deploy-notes.md", ["janela de deploy", "janela"]),
        _entry("x/other.md", ["unrelated"]),
    ])
    [hit] = cat.score([terms("qual a janela de deploy")])
    idf_janela = cat.idf("janela")
    idf_deploy = cat.idf("deploy")
    phrase = W_PHRASE * (idf_janela + idf_deploy) / 2
    stem = 3 * idf_deploy  # "deploy" is in the file name
    # The phrase is scored, its word "janela" does not score again as a one-word key.
    assert hit.matched[0] == "janela de deploy"
    assert hit.score == pytest.approx(phrase + stem)
    # Without the phrase in the question, the one-word key scores on its own.
    [hit2] = cat.score([terms("janela")])
    assert hit2.score == pytest.approx(W_KEYWORD * idf_janela)


def test_the_seed_worked_example_on_the_demo(demo):
    a = Memory(demo).ask("quem decide se um deploy pode ir pra producao", record_miss=False)
    assert a.keyword[0].id == "zed/knowledge/deploy-checklist.md"
    assert a.keyword[0].matched == ("deploy", "producao")
    # deploy (key 6 + title 3 + stem 3) + producao (key 6) = 18 x ln 6.5
    assert a.keyword[0].score == pytest.approx(18 * math.log(6.5))
    assert round(a.keyword[0].score, 2) == 33.69
    assert a.keyword[1].id == "steve/knowledge/hooks-that-hold.md"
    assert round(a.keyword[1].score, 2) == 7.49  # decide: title 3 + purpose 1
    assert round(a.confidence.margin, 2) == 4.50
    assert a.verdict == "hit" and a.agent.name == "zed"
    assert round(a.gate.floor, 3) == 6.916


def test_below_two_entries_the_verdict_is_never_hit(tmp_path):
    base = tmp_path / "solo"
    base.mkdir()
    (base / "agent.txt").write_text("name = Solo\n")
    (base / "note.md").write_text(
        "# Sourdough starter care\n\n**Search for:** `sourdough`, `starter`, `levain`, `feeding schedule`\n\n"
        "Feed the starter twice a day.\n"
    )
    a = Memory(base).ask("sourdough starter feeding schedule levain", record_miss=False)
    assert a.indexed.entries == 1 < MIN_ENTRIES_TO_ROUTE
    assert a.keyword[0].score > floor_for(1) * 10  # far above any floor...
    assert a.verdict == "guess"  # ...and still not a hit: one note has no ruler
    assert verdict_for(1000.0, 1) == "guess"
    assert verdict_for(0.0, 500) == "nothing"


def test_a_search_for_line_never_reaches_the_text_index(tmp_path):
    base = tmp_path / "b"
    (base / "knowledge").mkdir(parents=True)
    (base / "agent.txt").write_text("name = B\n")
    (base / "knowledge" / "a.md").write_text(
        "# Kettle descaling\n\n**Search for:** `zanzibarword`, `limescale`\n\nVinegar and water, an hour.\n"
    )
    (base / "knowledge" / "b.md").write_text("# Other\n\n**Search for:** `other`\n\nNothing here.\n")
    mem = Memory(base)
    a = mem.ask("zanzibarword", record_miss=False)
    assert a.keyword and a.keyword[0].path == "knowledge/a.md"  # the label scorer sees it
    assert a.text == ()  # the text scorer never does
    assert all("zanzibarword" not in body for _, body, _ in mem.indexes["b"].chunks_of("knowledge/a.md"))


def test_a_file_counts_once_at_its_best_chunk(tmp_path):
    """The seed's calorie-floor story: a protocol defining the floor in one table row must
    not lose to a longer file that mentions it three times in passing."""
    base = tmp_path / "coach"
    (base / "protocols").mkdir(parents=True)
    (base / "knowledge").mkdir()
    (base / "agent.txt").write_text("name = Coach\n")
    (base / "protocols" / "safety.md").write_text(
        "# Safety limits\n\n**Search for:** `safety`\n\n| rule | value |\n|---|---|\n"
        "| calorie floor | never below 1,200 kcal a day |\n"
    )
    filler = " ".join(["Meals, shopping lists and the week's plan are covered here in detail."] * 12)
    sections = "\n\n".join(
        f"## Part {i}\n\n{filler} In passing, the calorie floor matters. {filler}" for i in range(3)
    )
    (base / "knowledge" / "diary.md").write_text(f"# Eating diary\n\n**Search for:** `diary`\n\n{sections}\n")
    a = Memory(base).ask("calorie floor", record_miss=False)
    ids = [h.id for h in a.text]
    assert len(ids) == len(set(ids)) == 2  # each file once
    assert ids[0] == "coach/protocols/safety.md"
    assert len(Memory(base).indexes["coach"].chunks_of("knowledge/diary.md")) >= 3
