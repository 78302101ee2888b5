"""The suggester's work is bounded whatever the key count (issue 29 item 9).

A refused 4,000-character question over a base of keys spelled alike (one stem, a few
letters) made about 115 million dict lookups: every question word shares its grams with
every key word. Counted here by the words the suggester reads from its trigram index and
the keys it reaches from them, on a real Speller; the normal cases are test_suggest_miss.py's.
"""

from __future__ import annotations

from kbtools.surface_bench import STEM, alike_words, long_question

from engine.rank.normalize import terms
from engine.rank.suggest import SUGGEST_MAX, Speller, Spelling, spelling_of

BOUND = 800_000  # twice SUGGEST_BUDGET: a bound that does not grow with the keys


class _Posting(tuple):
    """A posting that counts the entries iterated over (its length is free, as a tuple's is)."""

    def __iter__(self):
        for item in tuple.__iter__(self):
            _Counted.read += 1
            yield item

    def __getitem__(self, i):
        got = tuple.__getitem__(self, i)
        return _Posting(got) if isinstance(i, slice) else got


class _Counted(dict):
    """A spelling's index whose postings count what is read from them: each word of a gram's
    posting, each key of a word."""

    read = 0

    def get(self, key, default=None):
        got = super().get(key, default)
        return _Posting(got) if got is not None else default


def _counted_speller(keys: list[str]) -> Speller:
    s = spelling_of(keys)
    return Speller([Spelling(_Counted(s.by_gram), _Counted(s.keys_of), s.keys)])


def _reads(keys: list[str], question: str) -> tuple[int, list[str]]:
    speller = _counted_speller(keys)
    _Counted.read = 0
    got = speller.suggest(terms(question))
    return _Counted.read, got


def test_a_long_question_over_alike_keys_reads_a_bounded_number_of_words():
    question = long_question()
    assert len(question) > 3900
    small, got_small = _reads(alike_words(2_000, STEM, 4, 7), question)
    large, got_large = _reads(alike_words(12_000, STEM, 4, 7), question)
    assert len(got_small) == len(got_large) == SUGGEST_MAX  # still the best of what it reached
    # the reads of the cost estimate (each word's postings' lengths) are not reads of a posting
    assert large <= BOUND, large
    assert small <= BOUND, small


def _every_pair(question_terms: list[str], keys: list[str]) -> list[str]:
    """The seed's rule measured on every (question word, key word) pair: a key at its best
    single alignment, 0.65 or more, best first, ties alphabetical, at most 8."""
    from engine.rank.normalize import words
    from engine.rank.suggest import SUGGEST_MIN_DICE, dice

    best, written = {}, {}
    for key in keys:
        norm = " ".join(words(key))
        if not norm or norm in written:
            continue
        written[norm] = " ".join(key.split())
        for w in dict.fromkeys(terms(key)):
            for q in question_terms:
                d = dice(q, w)
                if d >= SUGGEST_MIN_DICE and d > best.get(norm, 0.0):
                    best[norm] = d
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:SUGGEST_MAX]
    return [written[n] for n, _ in ranked]


def test_normal_questions_get_exactly_what_every_pair_measured_gives():
    import re
    from pathlib import Path

    demo = Path(__file__).resolve().parent.parent / "examples" / "demo"
    keys = [k for f in sorted(demo.rglob("*.md")) for line in f.read_text().splitlines()
            if line.startswith("**Search for:**") for k in re.findall(r"`([^`]+)`", line)]
    assert len(keys) > 100
    for question in ("rolback plna for the depoly", "protien per meel", "how do I reverter um deplyo",
                     "kubernetis monitorng", "treino de força e descanso", "qual acao da bolsa devo comprar"):
        q_terms = terms(question)
        assert Speller([spelling_of(keys)]).suggest(q_terms) == _every_pair(q_terms, keys), question
