"""Snowball stems for the text leg: Portuguese and English morphology, one token stream."""

from __future__ import annotations

from engine.rank.stemming import language_of, note_language, stem_question, stem_text
from engine.rank.normalize import unique_terms, words


def _same_stem(a: str, b: str, language: str) -> bool:
    return stem_text(a, language) == stem_text(b, language)


def test_portuguese_plural_gender_and_verb_forms_share_a_stem():
    pairs = [
        ("proteina", "proteinas"), ("treino", "treinos"), ("musculo", "musculos"),  # plural
        ("bonito", "bonita"), ("cansado", "cansada"),  # gender
        ("treinar", "treinando"), ("recuperar", "recuperando"), ("postar", "postou"),  # verb forms
        ("recuperação", "recuperacao"),  # accents folded before stemming, as the index folds them
    ]
    for a, b in pairs:
        assert _same_stem(a, b, "portuguese"), (a, b)
    assert not _same_stem("proteina", "treino", "portuguese")


def test_portuguese_endings_snowball_reads_accented_meet_typed_either_way():
    families = [
        # the noun of a verb, with and without its accents, singular and plural
        ["recuperar", "recuperação", "recuperacao", "recuperações", "recuperacoes", "recuperando"],
        ["informar", "informação", "informacao", "informações", "informacoes"],
        # plural of -ão and of -ção, which Snowball leaves apart from the singular
        ["decisão", "decisao", "decisões", "decisoes"],
        ["produção", "producao", "produções", "producoes"],
        ["opinião", "opiniões", "opinioes"],
        ["irmão", "irmãos", "irmaos", "irmao"],
        # adjectives in -ável / -ível, nouns in -ância / -ência
        ["confiável", "confiavel", "confiáveis", "confiaveis"],
        ["importância", "importancia", "importante"],
        ["frequência", "frequencia", "frequências"],
        # the imperfect, accented in its ending
        ["comíamos", "comiamos", "comia"],
        ["estávamos", "estavamos", "estava"],
    ]
    for family in families:
        stems = {stem_text(w, "portuguese") for w in family}
        assert len(stems) == 1, (family, stems)
    # short words keep their ending: `maes` (mothers) is not `mao` (hand), `caos` not `cao`
    assert not _same_stem("maes", "mao", "portuguese")
    assert not _same_stem("caos", "cao", "portuguese")


def test_english_plural_and_verb_forms_share_a_stem():
    for a, b in [("landing", "landings"), ("review", "reviewing"), ("deploys", "deployed")]:
        assert _same_stem(a, b, "english"), (a, b)


def test_a_note_is_stemmed_in_the_language_its_stopwords_say():
    assert language_of(words("quanto tempo um musculo leva para se recuperar depois do treino")) == "portuguese"
    assert language_of(words("how long does a muscle take to recover after the session")) == "english"
    assert language_of(words("proteina whey")) is None
    # English stemming leaves 'treinos' nearly whole; Portuguese takes it to 'trein'.
    assert stem_text("os treinos da semana que vem") == "os trein da seman que vem"


def test_one_stopword_repeated_does_not_decide_a_language():
    # NFCorpus's published abstracts have their English stopwords removed and every number
    # replaced by `num`, a Portuguese stopword; abbreviations (`se`, `eu`, vitamin `e`) add
    # a few more. Counted by occurrence they read as Portuguese; by distinct words they do not.
    abstract = "statin num breast cancer num patients num num cohort se risk num"
    assert note_language([abstract]) == "english"
    assert stem_text(abstract) == " ".join(stem_text(w, "english") for w in abstract.split())


def test_the_generic_adjectives_count_as_english():
    # The reference list runs `high low long short ...` inside its Portuguese block.
    assert language_of(words("high fat low carb long term short chain")) == "english"


def test_a_question_that_does_not_say_its_language_asks_for_both_stems():
    assert stem_question("proteinas whey", ["proteinas", "whey"]) == ["proteina", "protein", "whey"]
    assert stem_question("how many landings", ["many", "landings"]) == ["mani", "land"]


def test_stemming_keeps_the_words_count_and_order():
    text = "As Proteínas do treino, e a recuperação!"
    assert len(stem_text(text).split()) == len(words(text))


def test_a_stem_that_is_a_stopword_is_not_asked_for():
    # Portuguese Snowball turns the Italian "come" into "com", a stopword every Portuguese
    # note keeps in its stems: asked for, it would match nearly every note.
    stems = stem_question("come funziona il registro delle decisioni", ["come", "registro"])
    assert "com" not in stems
    assert "come" in stems and "registr" in stems


def test_the_index_finds_a_portuguese_noun_by_its_verb_typed_without_accents(tmp_path):
    """Through the real index: the note says `recuperação`, the question `recuperar` or
    `recuperacao`; an English note beside it is not found."""
    from engine.memory import Memory

    notes = tmp_path / "base" / "notes"
    notes.mkdir(parents=True)
    (notes / "descanso.md").write_text(
        "# Descanso\n\nA recuperação muscular depende do sono e da proteína que se come depois do treino.\n",
        encoding="utf-8")
    (notes / "deploy.md").write_text(
        "# Deploy\n\nRoll back the release when the error rate doubles after a deploy.\n", encoding="utf-8")
    mem = Memory([str(tmp_path / "base")])
    mem.snapshot()
    idx = next(iter(mem.indexes.values()))
    for question in ("como recuperar o musculo", "recuperacao muscular", "recuperações"):
        rows, _ = idx.search(unique_terms(question), 10, question)
        assert [r[0] for r in rows] == ["notes/descanso.md"], question


def test_the_index_leaves_out_the_stopwords_no_question_asks(tmp_path):
    """A stopword is never asked (normalize.terms), so the index holds the stems of the other
    words only; the stored text keeps every word as written."""
    import sqlite3

    from engine.memory import Memory
    from engine.rank.stemming import index_stems

    assert index_stems(words("The deployments of a service, x 2 times"), "english").split() == [
        "deploy", "servic", "x", "2", "time"]
    assert index_stems(words("Os treinos da semana que vem"), "portuguese").split() == ["trein", "seman", "vem"]
    notes = tmp_path / "base"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploy\n\nThe deployments of the service are rolled back by the owner.\n")
    mem = Memory([str(notes)])
    mem.snapshot()
    con = sqlite3.connect(notes / ".kb" / "index.db")
    body, stems = con.execute("SELECT body, body_stems FROM chunks").fetchone()
    assert stems.split() == ["deploy", "servic", "roll", "back", "owner"]
    assert body == "The deployments of the service are rolled back by the owner."
    assert {t for (t,) in con.execute("SELECT term FROM chunks_vocab")} == {"deploy", "servic", "roll", "back", "owner"}


def test_a_one_character_word_beside_a_content_word_is_asked_for():
    """`vitamin d`, `plano b`, `mach 5`, `x-15`: the letter or digit names the thing. The text
    leg asks for it (the index holds it); the keyword leg's terms still drop it (the seed)."""
    assert unique_terms("vitamin d") == ["vitamin"]  # the seed's normalisation, unchanged
    assert stem_question("vitamin d", ["vitamin"]) == ["vitamin", "d"]
    assert stem_question("qual o plano b do deploy", ["plano", "deploy"]) == ["plan", "deploy", "b"]
    assert stem_question("flutter of the x-15 at mach 5", ["flutter", "15", "mach"]) == [
        "flutter", "15", "mach", "x", "5"]


def test_a_letter_an_apostrophe_joins_to_a_word_is_not_asked_for():
    for question, terms in [("parkinson's disease", ["parkinson", "disease"]),
                            ("parkinson 's disease", ["parkinson", "disease"]),
                            ("didn’t carnitine help", ["didn", "carnitine", "help"]),
                            ("um copo d'água gelada", ["copo", "agua", "gelada"])]:
        assert not [s for s in stem_question(question, terms) if len(s) == 1], question


def test_stopwords_and_letters_alone_ask_for_nothing():
    assert stem_question("e o a i", []) == []  # stopwords, one character or not
    assert stem_question("x y z", []) == []  # no content word for a letter to stand beside


def test_the_index_finds_vitamin_d_before_a_shorter_note_on_vitamin_c(tmp_path):
    from engine.memory import Memory

    notes = tmp_path / "base" / "notes"
    notes.mkdir(parents=True)
    (notes / "citrus.md").write_text("# Citrus\n\nVitamin C in oranges.\n", encoding="utf-8")
    (notes / "bread.md").write_text("# Bread\n\nFlour, water, salt and time.\n", encoding="utf-8")
    (notes / "sunlight.md").write_text(
        "# Sunlight\n\nTwenty minutes of midday sun in summer make enough vitamin D for most adults;"
        " in winter, north of the fortieth parallel, the skin makes almost none.\n", encoding="utf-8")
    mem = Memory([str(tmp_path / "base")])
    mem.snapshot()
    idx = next(iter(mem.indexes.values()))
    rows, sent = idx.search(unique_terms("vitamin d"), 10, "vitamin d")
    assert sent == ["vitamin", "d"]
    assert [r[0] for r in rows] == ["notes/sunlight.md", "notes/citrus.md"]


def test_stemming_a_log_ahead_in_one_call_gives_the_stems_met_one_by_one():
    # `kb misses` stems its log's words ahead (stem_all); each stem must be the one the
    # cache would make when the word is met: endings put back, accents folded, stopword
    # stems marked, stopwords themselves, digits and letters.
    from engine.rank.stemming import LANGUAGES, _StemCache, word_stems

    sample = ["recuperacao", "informacoes", "comer", "come", "comia", "doses", "notes", "likely",
              "its", "being", "irmaos", "confiaveis", "importancia", "cantavamos", "running",
              "proteina", "x15", "n1234", "d", "pão", "ação", "deployments", "come"]
    for language in LANGUAGES:
        one_by_one, ahead = _StemCache(language), _StemCache(language)
        ahead.fill(sample)
        assert set(ahead) == set(sample)
        assert {w: ahead[w] for w in sample} == {w: one_by_one[w] for w in sample}, language
    for w in sample:
        assert word_stems(w) == stem_question("", [w])
