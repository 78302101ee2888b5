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

It is off by default (issue 26): those questions were written for our own demo, beside the
rule. On the seed's own blind set over the seed's demo fleet (50 questions nobody here
wrote) it demoted 11 of 12 right confident answers to buy two baits, so the seed's gate is
the default and the rule is asked for: `--coverage-rule` for one run, or `coverage_rule = on`
in fleet.txt for every surface of the fleet (docs/decisions.md).
"""

from __future__ import annotations

from functools import lru_cache

from ..errors import KbError
from .normalize import terms as normalise
from ..shared.record import record

# Off: on a question set its author did not write, it lost more right answers than baits.
COVERAGE_RULE_ON = False
# The verbs' option, one wording for route, eval, boot and serve (and the room).
OPTION = "--coverage-rule"
OPTION_HELP = ("the coverage rule: a hit whose top note holds under half of the question's words is a guess"
               " (off by default, the seed's gate; fleet.txt: coverage_rule = on)")
SETTING = "coverage_rule"  # fleet.txt's key: `coverage_rule = on` turns the rule on for the fleet
_ON, _OFF = ("on", "yes", "true", "1"), ("off", "no", "false", "0")
COVERAGE_FLOOR = 0.5  # share of the question's distinct content words the top entry must hold


def rule_on(settings: dict[str, str], flag: bool | None, where: str) -> bool:
    """Whether the rule runs: `flag` (a verb's --coverage-rule) when given, else fleet.txt's
    key, else COVERAGE_RULE_ON. `where` names fleet.txt in the one-line refusal of a typo."""
    if flag is not None:
        return flag
    value = settings.get(SETTING)
    if value is None:
        return COVERAGE_RULE_ON
    word = value.strip().lower()
    if word in _ON:
        return True
    if word in _OFF or not word:
        return False
    raise KbError(f"{where}: {SETTING} = {value!r}: write on or off")


@record
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


# Notes whose "does its text hold this word" answers are remembered (covered_verdict's memo);
# past it the memory starts over.
HELD_WORDS_NOTES = 4_096


def covered_verdict(top, q_terms: list[str], search, rec, memo: dict) -> str:
    """hit, or guess when the top entry holds too few of the question's words.

    search: the top's base's text search (None: the base has no index); rec: the top's
    FileRecord in the question's snapshot (None: unknown); memo: the asker's held words."""
    label = " ".join((top.title, top.purpose, *top.keys))
    if search is None:
        return "hit" if coverage(q_terms, label, lambda ts: set()).enough else "guess"
    if rec is None:
        return "hit" if coverage(q_terms, label, lambda ts: search.terms_held(top.path, ts)).enough else "guess"
    version = (top.base, top.path, rec.hash)

    def held(ts: list[str]) -> set[str]:
        # Whether a note's text holds a word is fixed by its content: remembered by the
        # note's hash, so a question asked again (the room as one types, kb misses over a
        # log) asks the index only for words not yet asked of this version of the note.
        known = memo.setdefault(version, {})
        new = [t for t in ts if t not in known]
        if new:
            got = search.terms_held(top.path, new)
            if len(memo) > HELD_WORDS_NOTES:
                memo.clear()
                known = memo.setdefault(version, {})
            for t in new:
                known[t] = t in got
        return {t for t in ts if known.get(t)}

    return "hit" if coverage(q_terms, label, held).enough else "guess"
