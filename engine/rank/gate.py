"""The gate: one comparison, the top file's keyword score against a floor that scales.

SCORE_FLOOR and FLOOR_CALIBRATED_AT are one fact: 17.5 was the right floor for a fleet of
226 entries. floor_for(N) carries that floor to every size in the unit that made it, a
fraction of what one unique key scores, because a fixed number meant a different number
of keys at every size.
"""

from __future__ import annotations

from .catalogue import W_KEYWORD, idf_unique
from .terms import Term

SCORE_FLOOR = 17.5  # measured on a fleet of 226 entries, moved twice by kb eval
FLOOR_CALIBRATED_AT = 226  # re-derive together with SCORE_FLOOR or not at all
# Below two entries every key has df 1 and idf cannot tell anything apart: no ruler.
MIN_ENTRIES_TO_ROUTE = 2
FLOOR_FRACTION = SCORE_FLOOR / (W_KEYWORD * idf_unique(FLOOR_CALIBRATED_AT))  # 0.616


def floor_for(n: int) -> float:
    """The floor a top keyword score must reach to be a hit, at fleet size n."""
    return FLOOR_FRACTION * W_KEYWORD * idf_unique(max(n, 0))


def verdict_for(top_score: float, n: int) -> str:
    """hit, guess or nothing. A question sharing no word with a label scores zero: nothing."""
    if top_score <= 0:
        return "nothing"
    if n < MIN_ENTRIES_TO_ROUTE:
        return "guess"
    return "hit" if top_score >= floor_for(n) else "guess"


def explain(n: int) -> tuple[Term, ...]:
    """The floor at fleet size `n` as labelled terms with this fleet's numbers put in: what a
    surface prints to show where the floor comes from (the formula lives only here)."""
    iu = idf_unique(max(n, 0))
    return (
        Term("N", "entries (notes with a Search for line)", n),
        Term("idf_unique", f"ln(1 + {n}/2)", iu, "the weight of a key only one note carries"),
        Term(
            "floor", f"floor_for({n}) = {FLOOR_FRACTION:.4f} × {W_KEYWORD:g} × {iu:.4f}", floor_for(n),
            f"{SCORE_FLOOR:g} was measured at {FLOOR_CALIBRATED_AT} entries; the floor keeps that share "
            f"({FLOOR_FRACTION:.1%}) of what one unique key scores, at every size",
        ),
        Term("minimum", f"MIN_ENTRIES_TO_ROUTE = {MIN_ENTRIES_TO_ROUTE}", MIN_ENTRIES_TO_ROUTE,
             "with fewer entries every key weighs the same: there is no ruler yet, a guess at most"),
    )
