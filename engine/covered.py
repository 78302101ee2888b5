"""The coverage rule: a confident answer must be about most of what was asked.

A near-out-of-scope bait shares one word with the fleet ("how do I deploy a sailboat
anchor" shares `deploy`) and that one word can score a key above the floor. The rule asks
how many of the question's distinct content words the top entry holds anywhere (its title,
keys, purpose line or text); under COVERAGE_FLOOR of them, the hit is demoted to a guess.
It never turns a guess into a hit, never declines outright (the reading list is still
shown, as a guess), and never touches the ranking or the owner.

Measured on examples/demo/questions.tsv (written blind, before any score was seen): the
in-scope answers on the right file cover 0.50 to 1.00 of their words; the near baits that
scored a hit cover 0.25 to 0.50. At 0.5 (strictly below demotes) the rule demotes four of
seven near baits and one in-scope question whose confident answer was the wrong file; no
right in-scope answer is lost and the demo's gold table is unchanged (docs/quality.md).
"""

from __future__ import annotations

from functools import lru_cache

from .normalize import terms as normalise
from dataclasses import dataclass

COVERAGE_RULE_ON = True  # kept: on the blind set it demoted baits and lost no right answer
COVERAGE_FLOOR = 0.5  # share of the question's distinct content words the top entry must hold


@dataclass(frozen=True, slots=True)
class Coverage:
    """How many of the question's words a note's text holds."""

    held: int
    asked: int

    @property
    def share(self) -> float:
        return self.held / self.asked if self.asked else 1.0

    @property
    def enough(self) -> bool:
        return self.share >= COVERAGE_FLOOR


@lru_cache(maxsize=8192)  # the top entry's label, the same few for many questions
def _label_terms(label_text: str) -> frozenset[str]:
    return frozenset(normalise(label_text))


def coverage(question_terms: list[str], label_text: str, in_text) -> Coverage:
    """`label_text`: the entry's title, keys and purpose; `in_text(terms)`: the subset of
    `terms` its indexed text holds (asked only for the words the label lacks)."""
    asked = list(dict.fromkeys(question_terms))
    label = _label_terms(label_text)
    rest = [t for t in asked if t not in label]
    held_in_text = in_text(rest) if rest else set()
    return Coverage(held=len(asked) - len(rest) + len(held_in_text), asked=len(asked))
