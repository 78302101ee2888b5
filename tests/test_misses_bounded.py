"""The alias proposal of `kb misses` is bounded whatever the nearest note holds (issue 29 item 8).

One logged 4,000-character question whose nearest note has thousands of keys spelled alike
(one stem, a few letters): the proposal compared every question word with every key word
(20,000 keys: 35 s). Counted here by the word-against-key measures it makes (the
`functools.lru_cache` in front of them counts its calls), on a real Memory and index.
"""

from __future__ import annotations

from kbtools.surface_bench import alike_fleet, long_question

from engine import Memory
from engine.review.misses import MissEntry
from engine.review.missreview import review_one
from engine.review.missspelling import best_word

BOUND = 1_000_000  # measures for one question: a constant, not a multiple of the keys


def test_a_long_question_against_a_note_of_alike_keys_is_measured_a_bounded_number_of_times(tmp_path):
    fleet = alike_fleet(tmp_path, notes=1, keys_per_note=4_000)
    memory = Memory([fleet])
    question = long_question()
    entry = MissEntry(count=1, first_seen="2026-12-01", last_seen="2026-12-01", question=question)
    before = best_word.cache_info()
    review = review_one(memory, entry)
    after = best_word.cache_info()
    measured = (after.hits + after.misses) - (before.hits + before.misses)
    assert measured <= BOUND, measured
    assert review.proposal is not None  # still the best alias of what it measured
    assert review.proposal.basis == "spelling" and review.proposal.similarity >= 0.65
