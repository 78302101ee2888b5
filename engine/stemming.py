"""The text leg's token stream with Snowball stems, English or Portuguese.

`stem_text(text)` turns a note's text into the tokens a stemmed FTS5 column would index
(space-separated, accents folded, stopwords kept so phrase offsets stay honest);
`stem_question(terms)` turns a question's content terms into the stems to ask for. One
module, so notes and questions are always stemmed the same way.

Which language: the one whose stopwords the text holds more of. A note is long enough for
that to tell; a question often is not ("proteina whey"): when its stopwords do not decide,
it is stemmed both ways and both stems are asked for (a stem the index never saw costs
nothing). Measured on Cranfield (docs/quality.md): stemming an English question in
Portuguese too cost 0.0007 nDCG@10, so a question that does say its language is stemmed
in that one only. A note that does not say is stemmed as English.

The stemmer is PyStemmer (Snowball, a C extension), imported on first use so the engine
imports without it.
"""

from __future__ import annotations

from functools import lru_cache

from .normalize import words
from .stopwords import ENGLISH_STOPWORDS, PORTUGUESE_STOPWORDS, STOPWORDS

LANGUAGES = ("english", "portuguese")


@lru_cache(maxsize=None)
def _stemmer(language: str):
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer(language)


def language_of(tokens: list[str]) -> str | None:
    """english or portuguese, by which language's stopwords the words hold more of; None: a tie."""
    en = sum(t in ENGLISH_STOPWORDS for t in tokens)
    pt = sum(t in PORTUGUESE_STOPWORDS for t in tokens)
    return "portuguese" if pt > en else "english" if en > pt else None


def note_language(texts) -> str:
    """A note's language from (up to 64 KB of) its text; English when it does not say."""
    sample, size = [], 0
    for t in texts:
        sample.append(t)
        size += len(t)
        if size > 65536:
            break
    return language_of(words(" ".join(sample))) or "english"


def stem_words(tokens: list[str], language: str) -> list[str]:
    return _stemmer(language).stemWords(tokens)


def stem_text(text: str, language: str | None = None) -> str:
    """The note's folded words, each stemmed in the note's language, space-separated."""
    tokens = words(text)
    return " ".join(stem_words(tokens, language or language_of(tokens) or "english"))


def stem_question(question: str, terms: list[str]) -> list[str]:
    """Each content term's stem in the question's language (both when it does not say),
    first-seen order, each once."""
    return list(_stem_question(question, tuple(terms)))


@lru_cache(maxsize=4096)  # one question is stemmed once, not once per base it is asked of
def _stem_question(question: str, terms: tuple[str, ...]) -> tuple[str, ...]:
    said = language_of(words(question))
    out: dict[str, None] = {}
    for t in terms:
        for lang in (said,) if said else LANGUAGES:
            stem = _stemmer(lang).stemWord(t)
            # Notes keep their stopwords' stems (phrase offsets stay honest), so a content
            # word whose stem is a stopword ("come" -> "com" in Portuguese) would match
            # nearly every note: such a stem is not asked for; the word itself still is.
            if stem == t or stem not in STOPWORDS:
                out.setdefault(stem, None)
    return tuple(out)
