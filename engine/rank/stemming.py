"""The text leg's token stream with Snowball stems, English or Portuguese.

`stem_text(text)` turns text into its stems (space-separated, accents folded, every word);
`index_stems(words)` is what the index holds of a note: every word's stem but the
stopwords', which no question asks; `stem_question(terms)` turns a question's content
terms into the stems to ask for. One module, so notes and questions are always stemmed the
same way.

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

from hashlib import blake2b
from .normalize import fold, one_character_words, words
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
_SAYS_LANGUAGE = _ENGLISH_ONLY | _PORTUGUESE_ONLY


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
    present: set[str] = set()  # only the words that can say: one language's stopwords
    size = 0
    for tokens in token_lists:
        present.update(_SAYS_LANGUAGE.intersection(tokens))
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


_BARE_ENDINGS = tuple(bare for bare, _ in _PORTUGUESE_ENDINGS)


def _accented(word: str) -> str:
    if not word.endswith(_BARE_ENDINGS):
        return word  # most words: one C call instead of the table's loop
    for bare, accented in _PORTUGUESE_ENDINGS:
        if word.endswith(bare) and len(word) > len(bare) + 1:
            return word[: -len(bare)] + accented
    return word


# Folded word -> its stem, per language. A fleet's vocabulary repeats (a 9,818-chunk base:
# 957,000 words, 18,000 distinct), so each distinct word meets Snowball (and, in Portuguese,
# the ending table's Python loop) once, in __missing__, and every later occurrence is a dict
# lookup that map() makes in C: a build stems a chunk several times faster than stemWords
# on it. Past the cap a new word is stemmed and not kept, so a huge base cannot grow it.
_STEMS_MAX = 1 << 18


class _StemCache(dict):
    def __init__(self, language: str, without_stopwords: bool = False):
        super().__init__()
        self.language = language
        self.without_stopwords = without_stopwords

    def __missing__(self, word: str) -> str:
        if self.without_stopwords and word in STOPWORDS:
            stem = ""  # never asked (engine/rank/normalize.terms): an empty token FTS5 passes over
        else:
            stem = self._finished(word, _stemmer(self.language).stemWord(self._snowball_input(word)))
        if len(self) < _STEMS_MAX:
            self[word] = stem
        return stem

    def fill(self, words) -> None:
        """Stem the words not yet kept in one call to Snowball (stemWords takes a list): a
        miss log's thousands of new words, each otherwise a __missing__ call of its own."""
        new = [w for w in dict.fromkeys(words) if w not in self][: max(_STEMS_MAX - len(self), 0)]
        if self.without_stopwords:
            new = [w for w in new if w not in STOPWORDS]
        if not new:
            return
        raw = _stemmer(self.language).stemWords([self._snowball_input(w) for w in new])
        self.update(zip(new, map(self._finished, new, raw)))

    def _snowball_input(self, word: str) -> str:
        return _accented(word) if self.language == "portuguese" else word

    def _finished(self, word: str, stem: str) -> str:
        if self.language == "portuguese" and not stem.isascii():
            stem = fold(stem)
        return _kept(word, stem) if stem else stem


_STEMS: dict[str, _StemCache] = {}
_INDEX_STEMS: dict[str, _StemCache] = {}


def _stems_of(language: str) -> _StemCache:
    cache = _STEMS.get(language)
    if cache is None:
        cache = _STEMS.setdefault(language, _StemCache(language))
    return cache


def index_stems(tokens: list[str], language: str) -> str:
    """What the index holds of a note's words: each one's stem, stopwords left out,
    space-separated.

    A question never asks a stopword (engine/rank/normalize.terms), so indexing them only made
    every chunk longer to BM25 and every build slower. Measured on Cranfield and NFCorpus
    (docs/quality.md), leaving them out moved the text leg from 0.5430 to 0.5440 and from
    0.3394 to 0.3397 nDCG@10; leaving out single characters as well (also never asked) did
    better on Cranfield and worse on NFCorpus, so they stay. A stopword becomes an empty
    string, so the join stays one C call; FTS5's tokenizer passes over the extra space.
    """
    cache = _INDEX_STEMS.get(language)
    if cache is None:
        cache = _INDEX_STEMS.setdefault(language, _StemCache(language, without_stopwords=True))
    return " ".join(map(cache.__getitem__, tokens))


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
    return list(map(_stems_of(language).__getitem__, tokens))


def stem_text(text: str, language: str | None = None) -> str:
    """The note's folded words, each stemmed in the note's language, space-separated."""
    tokens = words(text)
    return " ".join(stem_words(tokens, language or language_of(tokens, NOTE_MIN_DISTINCT) or "english"))


def stem_all(words) -> None:
    """Stem these words ahead, in both languages, in one Snowball call each: for a caller
    about to stem thousands of questions' words (`kb misses`); the stems are the same."""
    words = list(words)
    for language in LANGUAGES:
        _stems_of(language).fill(words)


def word_stems(term: str) -> list[str]:
    """One word's stems as a question that does not say its language asks for it (both
    languages, each once): stem_question("", [term]) without the question's work."""
    return list(dict.fromkeys([_stems_of(language)[term] for language in LANGUAGES]))


def stem_question(question: str, terms: list[str]) -> list[str]:
    """Each content term's stem in the question's language (both when it does not say),
    first-seen order, each once; then the question's one-character words that name
    something (`vitamin d`, `plano b`: normalize.one_character_words), when it has a
    content word for them to stand beside."""
    return list(_stem_question(question, tuple(terms)))


@lru_cache(maxsize=4096)  # one question is stemmed once, not once per base it is asked of
def _stem_question(question: str, terms: tuple[str, ...]) -> tuple[str, ...]:
    said_words = words(question)
    said = language_of(said_words)
    # The seed's terms drop one-character words; the text leg asks for those beside a content
    # word, since `vitamin d` asked as `vitamin` finds every vitamin alike. Measured on
    # Cranfield and NFCorpus (docs/quality.md): better on both. Letters alone ask for nothing.
    if terms:
        terms = terms + tuple(one_character_words(question, said_words))
    # Each term in each language, in that order; a content word whose stem is a stopword
    # ("come" -> "com") is asked as the marked stem the notes hold (_kept, "com0"): never
    # "com", which nearly every note holds. The caches read directly: `kb misses` stems
    # thousands of distinct questions, each a miss of this function's own cache.
    caches = [_stems_of(lang) for lang in ((said,) if said else LANGUAGES)]
    return tuple(dict.fromkeys([stems[t] for t in terms for stems in caches]))


# Words whose stems say which stemmer made an index: each language's suffix rules (Snowball
# step by step), the Portuguese endings above, and stems that are stopwords (_kept). An
# upgrade of PyStemmer that moves a stem moves the fingerprint, and the index is rebuilt
# (engine/index/indexupdate.stems_differ) instead of keeping stems no question is stemmed to.
_FINGERPRINT_WORDS = {
    "english": (
        "caresses", "ponies", "agreed", "hoping", "sized", "happily", "relational", "conditional",
        "generously", "electricity", "hopefulness", "formalize", "adjustment", "dependable",
        "effective", "communism", "controlling", "deployments", "dying", "skies", "news", "likely",
        "doses", "notes", "arguing", "gently", "replacement", "sensibility", "national", "running",
    ),
    "portuguese": (
        "recuperacao", "informacoes", "comer", "comia", "felizmente", "livros", "cantavamos",
        "amaveis", "possibilidade", "corretamente", "producao", "pessoas", "decidiram",
        "rapidamente", "inteligencia", "importancias", "terrivel", "irmaos", "paes", "alemaes",
    ),
}


@lru_cache(maxsize=None)
def stems_fingerprint() -> str:
    """A digest of the stems this process makes of a fixed list of words, in both languages."""
    digest = blake2b(digest_size=8)
    for language, sample in _FINGERPRINT_WORDS.items():
        digest.update(f"{language}:{' '.join(stem_words(list(sample), language))}\n".encode())
    return digest.hexdigest()
