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

from .normalize import fold, words
from .stopwords import ENGLISH_STOPWORDS, PORTUGUESE_STOPWORDS, STOPWORDS

LANGUAGES = ("english", "portuguese")


@lru_cache(maxsize=None)
def _stemmer(language: str):
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer(language)


# A note says its language only with at least this many distinct stopwords of it: one word
# repeated (a placeholder, an abbreviation such as `se` or `eu` in English medical prose)
# must not decide, since a note that does not say is stemmed in English alone. Measured on
# NFCorpus, whose published text has its English stopwords removed: with occurrences
# counted, 2,879 of its 3,162 English abstracts read as Portuguese; with three distinct
# words required, 23 (docs/quality.md). A question needs only a margin: when it does not
# say, it is stemmed both ways, which costs little.
NOTE_MIN_DISTINCT = 3
_ENGLISH_ONLY = ENGLISH_STOPWORDS - PORTUGUESE_STOPWORDS
_PORTUGUESE_ONLY = PORTUGUESE_STOPWORDS - ENGLISH_STOPWORDS


def language_of(tokens: list[str], min_distinct: int = 1) -> str | None:
    """english or portuguese, by which language's stopwords the words hold more distinct ones
    of (a word both lists hold counts for neither); None: a tie, or too few to say."""
    present = set(tokens)
    en = len(present & _ENGLISH_ONLY)
    pt = len(present & _PORTUGUESE_ONLY)
    if max(en, pt) < min_distinct:
        return None
    return "portuguese" if pt > en else "english" if en > pt else None


def note_language(texts) -> str:
    """A note's language from (up to 64 KB of) its text; English when it does not say."""
    sample, size = [], 0
    for t in texts:
        sample.append(t)
        size += len(t)
        if size > 65536:
            break
    return language_of(words(" ".join(sample)), NOTE_MIN_DISTINCT) or "english"


def note_language_of_words(token_lists) -> str:
    """note_language for text already split into words (about 64 KB of it: 10,000 words)."""
    present: set[str] = set()
    size = 0
    for tokens in token_lists:
        present.update(tokens)
        size += len(tokens)
        if size > 10_000:
            break
    return language_of(list(present), NOTE_MIN_DISTINCT) or "english"


# Snowball's Portuguese rules are written for accented text (-ção, -ões, -ência, -ável,
# -íamos...), and the index folds accents before anything else, so `recuperação` reached
# the stemmer as `recuperacao` and stopped at `recuperaca`, away from `recuperar`. Stemming
# the accented word first would not do: a question typed without accents (`recuperacao`)
# would then miss the note that has them. So the folded word gets back the accents of the
# endings the rules key on, the same way whether it was typed with them or not; the plurals
# the rules leave apart from their singular (-ões, -ães, -ãos, -ções, -âncias, -ências,
# -áveis, -íveis) become the singular; the stem is folded again. Measured on 24 families of
# Portuguese words (docs/quality.md): 161 of 179 pairs meet, against 100 folding first and
# 109 stemming the accented word.
_PORTUGUESE_ENDINGS = (
    ("coes", "ção"), ("cao", "ção"), ("oes", "ão"), ("aes", "ão"), ("aos", "ão"), ("ao", "ão"),
    ("ancias", "ância"), ("ancia", "ância"), ("encias", "ência"), ("encia", "ência"),
    ("aveis", "ável"), ("avel", "ável"), ("iveis", "ível"), ("ivel", "ível"),
    ("iamos", "íamos"), ("avamos", "ávamos"),
)


def _accented(word: str) -> str:
    for bare, accented in _PORTUGUESE_ENDINGS:
        if word.endswith(bare) and len(word) > len(bare) + 1:
            return word[: -len(bare)] + accented
    return word


# Folded word -> its Portuguese stem. The ending table costs a Python loop per word, which
# would triple the time Portuguese notes take to index; a fleet's vocabulary repeats, so
# each distinct word pays it once. Capped so a huge base cannot grow it without end.
_PORTUGUESE_STEMS: dict[str, str] = {}
_PORTUGUESE_STEMS_MAX = 1 << 18


def _portuguese_stems(tokens: list[str]) -> list[str]:
    known = _PORTUGUESE_STEMS
    new = [t for t in set(tokens) if t not in known]
    if new:
        stems = _stemmer("portuguese").stemWords([_accented(t) for t in new])
        found = {t: _kept(t, s if s.isascii() else fold(s)) for t, s in zip(new, stems)}
        if len(known) + len(found) <= _PORTUGUESE_STEMS_MAX:
            known.update(found)
        else:
            found.update((t, known[t]) for t in set(tokens) if t in known)
            return [found[t] for t in tokens]
    return [known[t] for t in tokens]


# Marks a stem that would otherwise be a stopword: a digit, which Snowball never leaves at the
# end of a stem of letters, and which the tokenizer keeps inside the token.
STOPWORD_STEM_MARK = "0"


def _kept(word: str, stem: str) -> str:
    """The token a word is indexed and asked as: its stem, marked when the stem is a stopword
    the word is not. Snowball makes `comer`, `come` and `comia` "com", `doses` "dos", `notes`
    "not" (an English word in a Portuguese note), `likely` "like": indexed so, the word was
    out of reach (a question cannot ask for "com", which every Portuguese note holds). Marked
    ("com0"), the family still meets, apart from the stopword; the same in notes and questions."""
    # A stopword itself ("its" -> "it", "being" -> "be") is never asked for: left as it was.
    return stem + STOPWORD_STEM_MARK if stem != word and stem in STOPWORDS and word not in STOPWORDS else stem


def stem_words(tokens: list[str], language: str) -> list[str]:
    if language == "portuguese":
        return _portuguese_stems(tokens)
    stems = _stemmer(language).stemWords(tokens)
    # This is the index build's inner loop: each distinct word is checked once per process,
    # with set operations, and the tokens are walked only when a chunk holds a marked word.
    seen, marked = _CHECKED.setdefault(language, (set(), {}))
    distinct = set(tokens)
    new = list(distinct - seen)
    if new:
        found = {t: _kept(t, st) for t, st in zip(new, _stemmer(language).stemWords(new)) if _kept(t, st) != st}
        if len(seen) < _STEMS_CHECKED_MAX:
            seen.update(new)
            marked.update(found)
        else:
            marked = {**marked, **found}
    if not marked.keys().isdisjoint(distinct):
        stems = list(map(marked.get, tokens, stems))  # dict.get(word, its stem), called from C
    return stems


# Per language: the words checked so far, and the ones whose stem was marked (word -> stem).
_CHECKED: dict[str, tuple[set[str], dict[str, str]]] = {}
_STEMS_CHECKED_MAX = 1 << 18


def stem_tokens(tokens: list[str], language: str) -> str:
    """stem_text for text already split into words."""
    return " ".join(stem_words(tokens, language))


def stem_text(text: str, language: str | None = None) -> str:
    """The note's folded words, each stemmed in the note's language, space-separated."""
    tokens = words(text)
    return " ".join(stem_words(tokens, language or language_of(tokens, NOTE_MIN_DISTINCT) or "english"))


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
            # A content word whose stem is a stopword ("come" -> "com") is asked as the marked
            # stem the notes hold (_kept, "com0"): never "com", which nearly every note holds.
            out.setdefault(stem_words([t], lang)[0], None)
    return tuple(out)
