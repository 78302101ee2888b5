"""The index build's fast paths must give exactly what the plain definitions give: words()
splitting ASCII text with str.translate, the stem cache in front of Snowball, and plain()
skipping the patterns whose marks a chunk does not hold. The index's stems and passages
depend on each of them, so a difference would change answers."""

from __future__ import annotations

import random
import re

import Stemmer

from engine.rank.excerpt import _EMPHASIS, _LINK, _WIKI, plain
from engine.rank.normalize import _SPLIT, fold, terms, words
from engine.rank.stopwords import STOPWORDS
from engine.rank.stemming import _accented, _kept, index_stems, stem_words


def _words_reference(text: str) -> list[str]:
    return [w for w in _SPLIT.split(fold(text)) if w]


def test_words_is_the_pattern_split_for_every_ascii_character_and_random_text():
    for cp in range(128):
        for text in (chr(cp), f"ab{chr(cp)}cd", f"{chr(cp)}x{chr(cp)}{chr(cp)}y"):
            assert words(text) == _words_reference(text), hex(cp)
    rng = random.Random(3)
    pool = [chr(c) for c in range(128)] + list("áéçãõ日本ß_ ") + ["\u00a0", "\u2003", "\u0301"]
    for _ in range(3000):
        s = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 300)))
        assert words(s) == _words_reference(s), repr(s)


def test_terms_is_the_pattern_split_for_every_ascii_character_and_random_text():
    # terms() splits ASCII as words() does; the seed's terms are the pattern's, stopwords and
    # one-character words dropped.
    def reference(text: str) -> list[str]:
        return [w for w in _SPLIT.split(fold(text)) if len(w) > 1 and w not in STOPWORDS]

    for cp in range(128):
        for text in (chr(cp), f"ab{chr(cp)}cd", f"{chr(cp)}xy{chr(cp)}{chr(cp)}the{chr(cp)}z"):
            assert terms(text) == reference(text), hex(cp)
    rng = random.Random(5)
    pool = [chr(c) for c in range(128)] + ["the", "de", "ab", "x_y"] + list("áéçãõ日本ß_ ") + ["\u00a0", "\u0301"]
    for _ in range(3000):
        s = "".join(rng.choice(pool) for _ in range(rng.randrange(0, 120)))
        assert terms(s) == reference(s), repr(s)


def test_stem_cache_gives_snowball_stems_first_and_later_time():
    english = Stemmer.Stemmer("english")
    portuguese = Stemmer.Stemmer("portuguese")
    text = ("the deployments were deployed by deploying agents recuperacao recuperações decisoes "
            "confiaveis comiamos running runs ran x9 naïve")
    tokens = words(text)
    for _ in range(2):  # the second pass is answered from the cache
        en = [_kept(t, s) for t, s in zip(tokens, english.stemWords(tokens))]
        assert stem_words(tokens, "english") == en
        pt = [_kept(t, fold(s)) for t, s in zip(tokens, portuguese.stemWords([_accented(t) for t in tokens]))]
        assert stem_words(tokens, "portuguese") == pt
        kept = [s for t, s in zip(tokens, en) if t not in STOPWORDS]
        assert index_stems(tokens, "english").split() == kept


def _plain_reference(text: str) -> str:
    return _EMPHASIS.sub("", _WIKI.sub(r"\2", _LINK.sub(r"\1", text)))


def test_plain_equals_all_three_patterns_run_every_time():
    rng = random.Random(5)
    pieces = ["[", "]", "(", ")", "[[", "]]", "](", "|", "*", "**", "_", "__", "`", "!", "a", "b c", "\n", "x.md"]
    for _ in range(5000):
        s = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
        assert plain(s) == _plain_reference(s), repr(s)
    assert plain("see [the list](deploy.md) and [[notes|the notes]] **now** `kb`") == "see the list and the notes now kb"
    assert re.search(r"\.md", plain("[a](b.md)")) is None
