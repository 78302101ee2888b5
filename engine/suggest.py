"""What the base does know that looks like the question: spelling, not meaning.

When nothing is served, each label key is compared with the question's words by the Dice
coefficient over character trigrams (a word under three characters is its own single
gram). A key's score is its best single alignment, one question word against one of its
words. It reaches a typo and a cognate across languages and never a translation, and when
no key is spelled near enough it offers nothing rather than the nearest thing it holds.

Both sides are aligned on their content words (stopwords out, as the question's are), so
`entrega` is not offered every key with `entre` in it; a key is offered as it was written,
once per normalised form, because it is the base's own vocabulary being shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from .normalize import terms, words

SUGGEST_MIN_DICE = 0.65  # below this, two words share letters by coincidence
SUGGEST_MAX = 8


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


@dataclass(frozen=True)
class _Vocabulary:
    """A label vocabulary prepared once: every key's content words, indexed by trigram."""

    keys: tuple[tuple[str, str], ...]  # (normalised form, as written), first spelling wins
    words_of: tuple[tuple[str, ...], ...]  # each key's content words
    by_gram: dict[str, tuple[str, ...]]  # trigram -> content words carrying it
    keys_of: dict[str, tuple[int, ...]]  # content word -> indexes into keys
    # question word -> (key index, Dice) of the keys it reaches: a long miss log says the same
    # words thousands of times, so each is aligned against the vocabulary once
    reached: dict[str, tuple[tuple[int, float], ...]] = field(default_factory=dict, compare=False)


@lru_cache(maxsize=8)
def _prepare(keys: tuple[str, ...]) -> _Vocabulary:
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    content: list[tuple[str, ...]] = []
    by_gram: dict[str, set[str]] = {}
    keys_of: dict[str, list[int]] = {}
    for key in keys:
        norm = " ".join(words(key))
        if not norm or norm in seen:
            continue
        seen.add(norm)
        ws = tuple(dict.fromkeys(terms(key)))
        if not ws:
            continue
        for w in ws:
            keys_of.setdefault(w, []).append(len(out))
            for g in trigrams(w):
                by_gram.setdefault(g, set()).add(w)
        out.append((norm, " ".join(key.split())))
        content.append(ws)
    return _Vocabulary(
        tuple(out), tuple(content), {g: tuple(ws) for g, ws in by_gram.items()},
        {w: tuple(ix) for w, ix in keys_of.items()},
    )


def _reach(vocab: _Vocabulary, q: str) -> tuple[tuple[int, float], ...]:
    """(key index, score) for every key one of whose words is spelled like `q`, each key at
    its best word, in the order the keys were first reached."""
    gq = trigrams(q)
    shared: dict[str, int] = {}
    for g in gq:
        for w in vocab.by_gram.get(g, ()):
            shared[w] = shared.get(w, 0) + 1
    best: dict[int, float] = {}
    for w, n in shared.items():
        score = 2.0 * n / (len(gq) + len(trigrams(w)))
        if score < SUGGEST_MIN_DICE:
            continue
        for i in vocab.keys_of[w]:
            if score > best.get(i, 0.0):
                best[i] = score
    return tuple(best.items())


_LAST: list = [(None, None)]  # (the last key tuple seen, its vocabulary), swapped as one value
REACHED_CAP = 100_000  # words remembered per vocabulary; past it the memory starts over


def _prepared(keys) -> _Vocabulary:
    """_prepare, without hashing every key again when the caller hands the same tuple (the
    catalogue's keys_as_written, one tuple per catalogue): tens of thousands of keys hashed
    per refusal was a measurable part of a miss."""
    last_keys, vocab = _LAST[0]
    if keys is last_keys and vocab is not None:
        return vocab
    vocab = _prepare(tuple(keys))
    if isinstance(keys, tuple):
        _LAST[0] = (keys, vocab)
    return vocab


def suggest(question_terms: list[str], keys: list[str], limit: int = SUGGEST_MAX) -> list[str]:
    """Keys spelled like the question's words, best first (ties alphabetical), at most `limit`.

    The vocabulary is prepared once per distinct key list and searched by shared trigrams,
    so only words that share a gram with the question are ever compared: microseconds.
    """
    if not question_terms or not keys:
        return []
    vocab = _prepared(keys)
    best: dict[int, float] = {}
    for q in dict.fromkeys(question_terms):
        reached = vocab.reached.get(q)
        if reached is None:
            if len(vocab.reached) >= REACHED_CAP:
                vocab.reached.clear()
            reached = vocab.reached[q] = _reach(vocab, q)
        for i, score in reached:
            if score > best.get(i, 0.0):
                best[i] = score
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], vocab.keys[kv[0]][0]))
    return [vocab.keys[i][1] for i, _ in ranked[:limit]]
