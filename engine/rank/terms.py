"""A labelled term of a sum or formula: how the engine explains its own arithmetic.

The engine owns its explanations (the floor, the RRF sum, the purpose fusion sum) so that a
surface renders them and never re-derives them: a changed formula changes one module, and
every surface shows the new arithmetic.
"""

from __future__ import annotations

from ..shared.record import record


@record
class Term:
    """One number of an explanation, with the formula that made it."""

    label: str  # what the number is: "floor", "keywords", "text", "graph", "sum"
    formula: str  # how it was computed, with this fleet's numbers put in ("1/(60 + 2)")
    value: float  # the result (an int for the fixed-point fusion terms)
    note: str = ""  # why, in a few words; may be empty


def fusion_parts(fusion: dict) -> tuple[Term, ...]:
    """A row's purpose-fusion score (the `fusion` of a reading-list row) as labelled terms:
    normalized signal × weight per signal, then the fused integer they add up to. A sum that
    does not add up is returned as it is, for the surface to flag: it means a bug."""
    terms = [
        Term(name, f"{c['normalized']:,} × {c['weight']}", c["contribution"])
        for name, c in fusion.get("contributions", {}).items()
    ]
    terms.append(Term("fused", fusion.get("purpose", ""), fusion.get("fusedScore", 0)))
    return tuple(terms)
