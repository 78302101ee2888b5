"""A near file's keys measured against a lost question's spans by spelling, within a budget.

`kb misses` proposes an alias from the key spelled most like words of the question that matched
nothing (character trigrams, as the suggester measures, plus the words run together): this is
that measure, indexed by trigram so a file of thousands of keys is read only where a span could
reach it (engine/review/missreview.py's `_propose` walks the near files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ..rank.normalize import terms
from ..rank.suggest import SUGGEST_MIN_DICE, dice, trigrams

# The steps one question's alias proposal may take (an index entry read, a key measured
# against a span), whatever the nearest file holds: a 4,000-character question against a
# note of 20,000 keys spelled alike compared every word with every key word (35 s). A
# person's question against a real note takes a few hundred. Spans are measured in order;
# a span or word cut short is not remembered, and the proposal is the best of what was
# measured (every similarity given exact).
PROPOSE_BUDGET = 300_000


@lru_cache(maxsize=65536)  # a log's questions share their words; each pair is measured once
def best_word(word: str, key_terms: tuple[str, ...]) -> float:
    return max(dice(word, w) for w in key_terms)


@dataclass(frozen=True)
class FileKeys:
    """One file's keys prepared once: their terms and trigrams, indexed by trigram, and per
    question word (and per span run together) the keys spelled near enough to be proposed.

    A pair (span, key) is proposed only at a similarity of SUGGEST_MIN_DICE or more, and its
    similarity is the larger of two Dice values: the words run together against the key's run
    together, and the mean over the span's words of each one's best against the key's words.
    A mean reaches the floor only if one of its parts does, so a key can be proposed for a span
    only if one of the span's words is spelled near one of its words (`near_word`) or the span
    run together is spelled near it run together (counted in `best_for`). Those keys are found through
    the trigram index, once per distinct word (a long log says the same words thousands of
    times), and only they are measured: the proposal is the one every pair measured gives.
    A run of words' best key is kept too (`best_for`): the log's questions repeat their runs.
    """

    terms: tuple[tuple[str, ...], ...]  # per key, in the file's order
    joined: tuple[frozenset[str], ...]  # per key: the trigrams of its words run together
    by_word_gram: dict[str, tuple[int, ...]]  # trigram -> the keys one of whose words carries it
    by_joined_gram: dict[str, tuple[int, ...]]  # trigram -> the keys whose words run together carry it
    all_joined_grams: frozenset[str]  # every key's words run together, their trigrams together
    fewest_joined_grams: int  # the fewest such trigrams one key has
    near: dict = field(default_factory=dict, compare=False)  # word -> the keys near it
    best: dict = field(default_factory=dict, compare=False)  # span -> (similarity, key order) or None

    def near_word(self, word: str, budget: "Budget | None" = None) -> tuple[int, ...]:
        """The keys one of whose words has a Dice of SUGGEST_MIN_DICE or more with `word`
        (those within `budget`'s steps, rarest grams first, when it runs out)."""
        got = self.near.get(word)
        if got is None:
            budget = budget if budget is not None else Budget()
            index = self.by_word_gram
            postings = [index.get(g, ()) for g in sorted(trigrams(word), key=lambda g: (len(index.get(g, ())), g))]
            reached: set[int] = set()
            whole = True
            for posting in postings:
                if not budget.take(len(posting)):
                    whole = False
                    break
                reached.update(posting)
            order = sorted(reached)
            if not budget.take(len(order)):
                whole = False
                order = order[: max(0, budget.left)]
            got = tuple(o for o in order if best_word(word, self.terms[o]) >= SUGGEST_MIN_DICE)
            if whole:
                _keep(self.near, word, got)
        return got

    def joined_may_reach(self, grams: frozenset[str]) -> bool:
        """Whether a span run together (its trigrams: `grams`) may reach a key here at all,
        false for most spans: no key shares more grams with it than all the keys together, so
        when even that and the smallest key fall short of the floor, no key can."""
        return 2.0 * len(grams & self.all_joined_grams) / (len(grams) + self.fewest_joined_grams) >= SUGGEST_MIN_DICE

    def best_for(self, span: tuple[str, ...], text: str, budget: "Budget | None" = None) -> tuple[float, int] | None:
        """The key spelled most like `span` (its words run together: `text`), as (similarity,
        key order): the highest similarity at or over the floor, the first key among equals,
        a key that is the span itself passed over; None when none reaches the floor. Kept per
        span: what a run of words is spelled like does not depend on the question it is in.

        Only the keys that can reach the floor are measured: near one of the span's words
        (`near_word`), or near it run together, found by counting the trigrams each key run
        together shares with it; that count is the size of their intersection, so it is the
        Dice numerator the measure below uses (a span's first measure is most of a long
        log's spans: each question brings its own word, so this runs once per span and file)."""
        got = self.best.get(span, UNKNOWN)
        if got is not UNKNOWN:
            return got
        budget = budget if budget is not None else Budget()
        spent_before = budget.exhausted
        got = None
        sj = trigrams(text)
        n_sj = len(sj)
        joined_of = self.joined
        orders: set[int] = set()
        for w in span:
            orders.update(self.near_word(w, budget))
        shared: dict[int, int] | None = None
        if self.joined_may_reach(sj):
            shared = {}
            by_gram = self.by_joined_gram
            for g in sj:
                posting = by_gram.get(g, ())
                if not budget.take(len(posting)):
                    shared = None  # counts cut short: each candidate's count is made again below
                    break
                for o in posting:
                    shared[o] = shared.get(o, 0) + 1
            if shared is not None:
                orders.update([o for o, k in shared.items() if 2.0 * k / (n_sj + len(joined_of[o])) >= SUGGEST_MIN_DICE])
        ordered = sorted(orders)
        if not budget.take(len(ordered) * len(span)):
            ordered = ordered[: max(0, budget.left) // len(span)]
        for order in ordered:
            kt = self.terms[order]
            if span == kt:
                continue  # a word aliased to itself adds nothing
            # How alike they are spelled: the words run together (`roll back` ~ `rollback`),
            # or each question word against its best key word.
            kj = joined_of[order]
            common = shared.get(order, 0) if shared is not None else len(sj & kj)
            joined = 2.0 * common / (n_sj + len(kj))
            each = sum([best_word(w, kt) for w in span]) / len(span)
            sim = max(joined, each)
            if sim >= SUGGEST_MIN_DICE and (got is None or sim > got[0]):
                got = (sim, order)
        if not budget.exhausted or spent_before:
            _keep(self.best, span, got)  # measured whole: what a span is spelled like is kept
        return got

    def any_word_near(self, span_words: list[str], budget: "Budget | None" = None) -> bool:
        """Whether a key here is spelled near one of these words (near_word, read from its
        memory first: most words of a long log are asked of the same file thousands of times)."""
        near = self.near
        for w in span_words:
            got = near.get(w)
            if got is None:
                got = self.near_word(w, budget)
            if got:
                return True
        return False


class Budget:
    """The steps left to one question's proposal (PROPOSE_BUDGET); `take` says whether
    `n` more fit, and spends them either way."""

    __slots__ = ("left",)

    def __init__(self, steps: int = 0) -> None:
        self.left = steps or PROPOSE_BUDGET

    def take(self, n: int) -> bool:
        self.left -= n
        return self.left >= 0

    @property
    def exhausted(self) -> bool:
        return self.left < 0


def _keep(memory: dict, what, found) -> None:
    if len(memory) >= NEAR_KEPT:
        memory.clear()
    memory[what] = found


NEAR_KEPT = 100_000  # words (and spans) remembered per file's keys; past it the memory starts over
UNKNOWN = object()  # not yet measured (None is a measured "no key")


@lru_cache(maxsize=4096)
def file_keys(keys: tuple[str, ...]) -> FileKeys:
    per_key: list[tuple[str, ...]] = []
    joined: list[frozenset[str]] = []
    by_word_gram: dict[str, set[int]] = {}
    by_joined_gram: dict[str, set[int]] = {}
    for order, key in enumerate(keys):
        kt = tuple(terms(key))
        per_key.append(kt)
        joined.append(trigrams("".join(kt)))
        if not kt:
            continue  # a key of no words is spelled like nothing
        for w in kt:
            for g in trigrams(w):
                by_word_gram.setdefault(g, set()).add(order)
        for g in joined[-1]:
            by_joined_gram.setdefault(g, set()).add(order)
    spelled = [j for kt, j in zip(per_key, joined) if kt]
    return FileKeys(tuple(per_key), tuple(joined), {g: tuple(sorted(ix)) for g, ix in by_word_gram.items()},
                     {g: tuple(sorted(ix)) for g, ix in by_joined_gram.items()},
                     frozenset().union(*spelled), min((len(j) for j in spelled), default=1))
