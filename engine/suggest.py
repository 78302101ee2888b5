"""What the base does know that looks like the question: spelling, not meaning.

When nothing is served, each label key is compared with the question's words by the Dice
coefficient over character trigrams (a word under three characters is its own single
gram). A key's score is its best single alignment, one question word against one of its
words. It reaches a typo and a cognate across languages and never a translation, and when
no key is spelled near enough it offers nothing rather than the nearest thing it holds.
"""

from __future__ import annotations

from functools import lru_cache

from .normalize import words

SUGGEST_MIN_DICE = 0.65  # below this, two words share letters by coincidence
SUGGEST_MAX = 8
LIMIT_NOTE = (
    "that is spelling and not meaning, so it finds a typo or a cognate",
    "and never finds a translation.",
)


@lru_cache(maxsize=65536)
def trigrams(word: str) -> frozenset[str]:
    if len(word) < 3:
        return frozenset([word])
    return frozenset(word[i : i + 3] for i in range(len(word) - 2))


def dice(a: str, b: str) -> float:
    ga, gb = trigrams(a), trigrams(b)
    if not ga or not gb:
        return 0.0
    return 2.0 * len(ga & gb) / (len(ga) + len(gb))


def suggest(question_terms: list[str], keys: list[str], limit: int = SUGGEST_MAX) -> list[str]:
    """Keys spelled like the question's words, best first (ties alphabetical), at most `limit`."""
    if not question_terms:
        return []
    best: dict[str, float] = {}
    for key in keys:
        norm = " ".join(words(key))
        if not norm or norm in best:
            continue
        score = max(dice(q, w) for q in question_terms for w in norm.split())
        if score >= SUGGEST_MIN_DICE:
            best[norm] = score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
    return [k for k, _ in ranked[:limit]]
