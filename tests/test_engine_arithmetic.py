"""The arithmetic of "How the Catalogue Ranks", pinned: floor, idf, fusion, normalisation, phrases, best chunk."""

from __future__ import annotations

import math

import pytest

from engine import Memory
from engine.rank.catalogue import W_KEYWORD, W_PHRASE, Catalogue, idf_unique, make_entry
from engine.rank.gate import FLOOR_CALIBRATED_AT, MIN_ENTRIES_TO_ROUTE, SCORE_FLOOR, floor_for, verdict_for
from engine.rank.normalize import fold, terms
from engine.rank.rrf import RRF_K, rrf


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
    # The reference list is closed classes only: `ir`, `pra`, `much` and `per` are content words.
    assert terms("quem decide se um deploy pode ir pra produção?") == ["decide", "deploy", "ir", "pra", "producao"]
    assert terms("how much protein per meal") == ["much", "protein", "per", "meal"]
    assert terms("como prender a atencao nos primeiros segundos do video") == [
        "prender", "atencao", "primeiros", "segundos", "video"]
    assert terms("e o a i") == []


def test_the_stopword_list_is_the_reference_list_word_for_word():
    from engine.rank.stopwords import STOPWORDS

    # 295 words in the reference, five of them written twice (`as`, `me`, `no`, `so`, `real`).
    assert len(STOPWORDS) == 289
    for word in ("the", "lets", "own", "os", "ate", "dar", "hoje", "assim", "errado", "vazio", "worst"):
        assert word in STOPWORDS
    for word in ("much", "per", "primeiros", "pra", "ir", "many", "each", "pouco", "coisa", "segundo"):
        assert word not in STOPWORDS


def _entry(path, keys, title="Untitled note", purpose=""):
    return make_entry("b", path, title, purpose, "memory", tuple(keys))


def test_a_one_word_key_still_scores_beside_a_phrase_that_holds_its_word():
    cat = Catalogue([
        _entry("x/deploy-notes.md", ["janela de deploy", "janela"]),
        _entry("x/other.md", ["unrelated"]),
    ])
    [hit] = cat.score([terms("qual a janela de deploy")])
    idf_janela = cat.idf("janela")
    idf_deploy = cat.idf("deploy")
    phrase = W_PHRASE * (idf_janela + idf_deploy) / 2
    stem = 3 * idf_deploy  # "deploy" is in the file name
    # The phrase scores, and the entry's own one-word key `janela` scores beside it.
    assert hit.matched == ("janela de deploy", "janela", "deploy")
    assert hit.score == pytest.approx(phrase + W_KEYWORD * idf_janela + stem)
    # Without the phrase in the question, the one-word key scores on its own.
    [hit2] = cat.score([terms("janela")])
    assert hit2.score == pytest.approx(W_KEYWORD * idf_janela)


def test_a_phrase_does_not_lend_its_words_to_the_one_word_keys():
    cat = Catalogue([_entry("x/a.md", ["janela de deploy"]), _entry("x/b.md", ["other"])])
    # `janela` alone is not a key of the entry: only the whole phrase is.
    assert cat.score([terms("janela")]) == []


def _protein_fleet() -> Catalogue:
    """Eleven entries shaped like the seed's demo around its protein note."""
    protein = _entry(
        "knowledge/protein-basics.md", ["protein", "how much protein", "protein per meal"],
        title="Protein: the daily target", purpose="Give a daily protein target",
    )
    meal = _entry("index.md", ["meal", "meal plan"], title="The nutrition desk")
    others = [_entry(f"knowledge/other-{i}.md", [f"topic{i}"], title=f"Topic{i} notes") for i in range(9)]
    return Catalogue([protein, meal, *others])


def test_how_much_protein_per_meal_is_the_seeds_66_88():
    cat = _protein_fleet()
    assert cat.n == 11
    top, second = cat.score([terms("how much protein per meal")])[:2]
    assert top.entry.path == "knowledge/protein-basics.md"
    parts = {(word, why): round(weight * idf, 2) for word, why, weight, idf in top.terms}
    # The decomposition the specification prints, term by term.
    assert parts == {
        ("how much protein", "phrase 10"): 21.78,
        ("protein per meal", "phrase 10"): 20.76,
        ("protein", "key 6 + title 3 + stem 3 + purpose 1"): round(13 * math.log(6.5), 2),
    }
    assert round(6 * math.log(6.5), 2) == 11.23 and round(3 * math.log(6.5), 2) == 5.62
    assert round(top.score, 2) == 66.88
    assert round(second.score, 2) == 11.23  # `meal`, a one-word key of the desk's index
    assert round(top.score / second.score, 2) == 5.95


def test_the_seed_worked_example_on_the_demo(indexed_demo):
    a = Memory(indexed_demo).ask("quem decide se um deploy pode ir pra producao", record_miss=False)
    assert a.keyword[0].id == "zed/knowledge/deploy-checklist.md"
    assert a.keyword[0].matched == ("deploy", "producao")  # `ir` and `pra` are in no vocabulary
    # deploy (key 6 + title 3 + stem 3) + producao (key 6) = 18 x ln 6.5
    assert a.keyword[0].score == pytest.approx(18 * math.log(6.5))
    assert round(a.keyword[0].score, 2) == 33.69
    assert a.keyword[1].id == "steve/knowledge/hooks-that-hold.md"
    assert round(a.keyword[1].score, 2) == 7.49  # decide: title 3 + purpose 1
    assert round(a.confidence.margin, 2) == 4.50
    assert a.verdict == "hit" and a.agent.name == "zed"
    assert round(a.gate.floor, 6) == 6.916209


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


# The specification's printed `kb eval` table (columns file, agent, kw, score, margin,
# verdict), which the demo reproduces to the digit.
SEED_EVAL_TABLE = """\
  ok   ok    ok     33.7  4.50 hit    quem decide se um deploy pode ir pra producao
  ok   ok    ok     11.2  1.00 hit    como faco rollback sem downtime
  ok   ok    ok     22.5  1.00 hit    devo usar sqlite ou postgres no comeco
  ok   ok    ok     29.3  1.00 hit    what makes a review comment blocking
  ok   ok    ok     24.8  1.00 hit    como prender a atencao nos primeiros segundos do video
  ok   ok    ok     24.8  1.00 hit    qual a melhor frequencia de postagem
  ok   ok    ok     66.9  5.95 hit    how much protein per meal
  ok   ok    ok     11.2  1.00 hit    quanto tempo um musculo leva pra recuperar
  ok   ok    ok     24.8  1.00 hit    onde consulto a tabela nutricional de um alimento
  ok   ok    ok     33.0  1.00 hit    quantos gramas de proteina por quilo
  ok   -     -       0.0  0.00 none   qual acao da bolsa devo comprar
  ok   -     -       0.0  0.00 none   me conta uma piada
  ok   -     -       0.0  0.00 none   qual o sentido da vida
"""


def test_kb_eval_on_the_demo_prints_the_seeds_table(demo):
    from conftest import run_kb

    r = run_kb("eval", str(demo / "gold.tsv"), str(demo))
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("  ok ") or line.startswith("  --")]
    assert "\n".join(rows) + "\n" == SEED_EVAL_TABLE
    for line in ("keyword 10/10", "routes  10/10", "demoted 0/10", "refused 3, hedged 0, answered 0",
                 "always-yaron   4/10", "routing beats the fixed choice by +6"):
        assert line in r.stdout
