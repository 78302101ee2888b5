"""Snowball stems for the text leg: Portuguese and English morphology, one token stream."""

from __future__ import annotations

from engine.stemming import language_of, stem_question, stem_text
from engine.normalize import words


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


def test_english_plural_and_verb_forms_share_a_stem():
    for a, b in [("landing", "landings"), ("review", "reviewing"), ("deploys", "deployed")]:
        assert _same_stem(a, b, "english"), (a, b)


def test_a_note_is_stemmed_in_the_language_its_stopwords_say():
    assert language_of(words("quanto tempo um musculo leva para se recuperar depois do treino")) == "portuguese"
    assert language_of(words("how long does a muscle take to recover after the session")) == "english"
    assert language_of(words("proteina whey")) is None
    # English stemming leaves 'treinos' nearly whole; Portuguese takes it to 'trein'.
    assert stem_text("os treinos da semana") == "os trein da seman"


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
