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

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from .normalize import terms, words

SUGGEST_MIN_DICE = 0.65  # below this, two words share letters by coincidence
SUGGEST_MAX = 8
# The steps one suggestion may take (a gram's word read from the index, a key reached from a
# word), whatever the question and the base: a 4,000-character question over 100,000 keys
# spelled alike made about 115 million and took 21-33 s. A question of a person's length
# over a real base takes a few thousand. Words are reached cheapest first; a word whose
# grams alone would pass what is left is not reached, so every score given is exact and the
# answer is the best of what the budget reached.
SUGGEST_BUDGET = 400_000
REACHED_KEPT = 64  # forms kept per reached word: the best `limit` (8) of a word are all a suggestion reads


@lru_cache(maxsize=65536)
def trigrams(word: str) -> frozenset[str]:
    if len(word) < 3:
        return frozenset([word])
    return frozenset({word[i : i + 3] for i in range(len(word) - 2)})  # a set display: faster than a generator


def dice(a: str, b: str) -> float:
    ga, gb = trigrams(a), trigrams(b)
    if not ga or not gb:
        return 0.0
    return 2.0 * len(ga & gb) / (len(ga) + len(gb))


class Spelling:
    """A list of label keys prepared for the search: each key's content words, indexed by
    trigram. Built from keys (`spelling_of`), or read from a base's spelling cache
    (engine/index/spelling_cache.py), whose mappings decode a value when it is looked up."""

    __slots__ = ("by_gram", "keys_of", "keys")

    def __init__(self, by_gram: Mapping[str, tuple[str, ...]], keys_of: Mapping[str, tuple[int, ...]],
                 keys: Sequence[tuple[str, str]]):
        self.by_gram = by_gram  # trigram -> content words carrying it
        self.keys_of = keys_of  # content word -> indexes into keys
        self.keys = keys  # (normalised form, as written), the first spelling of each form


def spelling_of(keys: Iterable[str]) -> Spelling:
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
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
    return Spelling({g: tuple(sorted(ws)) for g, ws in by_gram.items()},
                    {w: tuple(ix) for w, ix in keys_of.items()}, out)


class Speller:
    """The search over one or more spellings, in key order: a fleet's bases, each prepared
    apart (a base's spelling is kept beside its index), answer as the list of all their keys.

    A key's words are a function of its normalised form, so the keys of one form carry the
    same words in every part: a form is reached from the same words wherever it is, and the
    first part holding it gives its first spelling.
    """

    def __init__(self, parts: Sequence[Spelling]):
        self.parts = parts
        self.written: dict[str, str] = {}  # normalised form -> its first spelling
        # question word -> (form, Dice) of the keys it reaches: a long miss log says the same
        # words thousands of times, so each is aligned against the vocabulary once
        self.reached: dict[str, tuple[tuple[str, float], ...]] = {}

    def suggest(self, question_terms: list[str], limit: int = SUGGEST_MAX) -> list[str]:
        """Keys spelled like the question's words, best first (ties alphabetical), at most
        `limit`. Only words sharing a gram with the question are ever compared: microseconds."""
        best: dict[str, float] = {}
        pending = [q for q in dict.fromkeys(question_terms) if q not in self.reached]
        left = SUGGEST_BUDGET
        if pending:
            # cheapest first: a word's grams' posting lengths are what reaching it reads
            # (each distinct gram's posting fetched once: the question's words share their grams)
            sizes: dict[str, int] = {}
            for q in pending:
                for g in trigrams(q):
                    if g not in sizes:
                        sizes[g] = sum(len(part.by_gram.get(g, ())) for part in self.parts)
            cost = {q: sum(sizes[g] for g in trigrams(q)) for q in pending}
            left -= len(sizes) * len(self.parts)
            for q in sorted(pending, key=lambda q: (cost[q], q)):
                if cost[q] > left:
                    break  # past the budget: this word and the costlier ones are not reached
                got, spent, whole = self._reach(q, left)
                left -= spent
                if whole:
                    if len(self.reached) >= REACHED_CAP:
                        self.reached.clear()
                    self.reached[q] = got
                self._merge(best, got)
        for q in dict.fromkeys(question_terms):
            reached = self.reached.get(q)
            if reached is None:
                continue  # not reached within the budget (or reached in part, merged above)
            self._merge(best, reached)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        return [self.written[norm] for norm, _ in ranked[:limit]]

    @staticmethod
    def _merge(best: dict[str, float], reached) -> None:
        for norm, score in reached:
            if score > best.get(norm, 0.0):
                best[norm] = score

    def _reach(self, q: str, budget: int) -> tuple[tuple[tuple[str, float], ...], int, bool]:
        """(form, score) for the keys one of whose words is spelled like `q`, each key at
        its best word, the best REACHED_KEPT of them (by score, then form: the order a
        suggestion ranks in, so a word's best `limit` are the only ones it can give); the
        steps taken; and whether every such key was reached within `budget` steps."""
        gq = trigrams(q)
        shared: dict[str, int] = {}
        steps = 0
        for part in self.parts:
            counted: dict[str, int] = {}
            for g in gq:
                posting = part.by_gram.get(g, ())
                steps += len(posting)
                for w in posting:
                    counted[w] = counted.get(w, 0) + 1
            shared.update(counted)  # a word carries the same grams in every part
        best: dict[str, float] = {}
        whole = True
        floor = SUGGEST_MIN_DICE
        for w, n in shared.items():
            # A word carries at least the n grams it shares: 2n / (|q| + n) bounds its Dice,
            # so most words are dropped without their own grams being made.
            if 2.0 * n / (len(gq) + n) < floor:
                continue
            score = 2.0 * n / (len(gq) + len(trigrams(w)))
            if score < floor:
                continue
            for part in self.parts:
                reached = part.keys_of.get(w, ())
                if steps + len(reached) > budget:
                    whole = False  # the rest of this word's keys are past the budget
                    reached = reached[: max(0, budget - steps)]
                steps += len(reached)
                for i in reached:
                    norm, written = part.keys[i]
                    self.written.setdefault(norm, written)
                    if score > best.get(norm, 0.0):
                        best[norm] = score
            if not whole:
                break
        kept = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:REACHED_KEPT]
        return tuple(kept), steps, whole


REACHED_CAP = 100_000  # words remembered per speller; past it the memory starts over


@lru_cache(maxsize=8)
def _prepare(keys: tuple[str, ...]) -> Speller:
    return Speller([spelling_of(keys)])


_LAST: list = [(None, None)]  # (the last key tuple seen, its speller), swapped as one value


def speller_for(keys) -> Speller:
    """The speller of a key list, prepared once per distinct list, without hashing every key
    again when the caller hands the same tuple (the catalogue's keys_as_written, one tuple per
    catalogue): tens of thousands of keys hashed per refusal was a measurable part of a miss."""
    last_keys, speller = _LAST[0]
    if keys is last_keys and speller is not None:
        return speller
    speller = _prepare(tuple(keys))
    if isinstance(keys, tuple):
        _LAST[0] = (keys, speller)
    return speller


def suggest(question_terms: list[str], keys: list[str], limit: int = SUGGEST_MAX) -> list[str]:
    """Keys spelled like the question's words, best first (ties alphabetical), at most `limit`."""
    if not question_terms or not keys:
        return []
    return speller_for(keys).suggest(question_terms, limit)
