"""The purposes: a closed set of integer weights, each with the reason it is what it is.

A purpose is one entry in PURPOSES; `kb route --purpose`, the reading room's F7 cycle, its
palette and `--purpose` choices, the fusion stamp and the tests read the list from here.

Four signals (text, graph, recency, boost) on the grid [0, SCALE]; four integer weights in
[0, WEIGHT_TOTAL] that sum to exactly WEIGHT_TOTAL, so a fused score is an integer in
[0, SCALE x WEIGHT_TOTAL] and every row's four contributions add up to it to the digit.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.stages.purpose.errors import FusionOptionError

# Every signal is an integer on [0, SCALE]; one million keeps six decimal places of a [0, 1] value.
SCALE = 1_000_000
# The weights are basis points of the whole: four of them sum to exactly this.
WEIGHT_TOTAL = 10_000
# The stage's switch (off by default) is defined in engine/stages/purpose/__init__.py, where the
# engine reads it on every question without importing the stage.
from engine.stages.purpose import PURPOSE_DEFAULT_ON  # noqa: E402,F401  (re-exported here)
# The purpose a caller gets when they ask for fusion without naming one: text dominant and
# recency exactly 0, so it is the purpose closest to the plain RRF order.
DEFAULT_PURPOSE = "documents"

DAY_MS = 86_400_000


@dataclass(frozen=True)
class Weights:
    """A purpose's fixed-point weight per signal."""

    text: int
    graph: int
    recency: int
    boost: int

    def as_dict(self) -> dict[str, int]:
        return {"text": self.text, "graph": self.graph, "recency": self.recency, "boost": self.boost}


@dataclass(frozen=True)
class Purpose:
    """A named mix of signals for the reading list's order."""

    name: str
    weights: Weights
    half_life_ms: int  # recency halves once per half-life; read and reported even at weight 0
    reason: str  # why the weights are these (for whoever changes them)
    plain: str = ""  # what the order favours, for whoever picks one (the room's palette)


PURPOSES: dict[str, Purpose] = {
    p.name: p
    for p in (
        Purpose(
            "documents",
            Weights(text=8000, graph=1500, recency=0, boost=500),
            30 * DAY_MS,
            "text dominant with a co-mention link pull; recency exactly 0 because a small weight is a tiebreaker nobody asked for",
            "the text match first, then notes linked to it; how old a note is does not count",
        ),
        Purpose(
            "conversation",
            Weights(text=6000, graph=1000, recency=2500, boost=500),
            7 * DAY_MS,
            "text 6000 exceeds the other three together (4000), so nothing lifts a row the question does not match; half-life 7 days is 'this week'",
            "the text match first, and this week's notes ahead of older ones",
        ),
        Purpose(
            "workspace",
            Weights(text=2500, graph=6000, recency=1000, boost=500),
            30 * DAY_MS,
            "graph > 2 x text: one hop from an explicit anchor (6000 x 500,000) beats a perfect text match (2500 x 1,000,000); two hops do not",
            "notes one link away from the best matches (or from the notes you name) ahead of the text order",
        ),
    )
}
# Declared order, which is also the order a surface lists them in; the names are kept at the
# package's front door (engine/stages/purpose/__init__.py) too, and must be these.
from engine.stages.purpose import PURPOSE_NAMES  # noqa: E402  (re-exported here)

if tuple(PURPOSES) != PURPOSE_NAMES:
    raise ImportError(f"engine.stages.purpose.PURPOSE_NAMES {PURPOSE_NAMES} is not the purposes declared here {tuple(PURPOSES)}")


def get_purpose(name: object) -> Purpose:
    """The purpose named `name`, or a refusal listing them."""
    if not isinstance(name, str) or name not in PURPOSES:
        raise FusionOptionError(
            f"unknown purpose {name!r}: use one of {', '.join(PURPOSE_NAMES)}"
        )
    return PURPOSES[name]


def check_weights(p: Purpose) -> None:
    """Raise if a purpose breaks the grid's law (each weight in range, exact total)."""
    w = p.weights.as_dict()
    for k, v in w.items():
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= WEIGHT_TOTAL:
            raise AssertionError(f"purpose {p.name}: weight {k}={v!r} is not an integer in [0, {WEIGHT_TOTAL}]")
    if sum(w.values()) != WEIGHT_TOTAL:
        raise AssertionError(f"purpose {p.name}: weights sum to {sum(w.values())}, not {WEIGHT_TOTAL}")
    if p.half_life_ms <= 0:
        raise AssertionError(f"purpose {p.name}: half-life must be positive")


for _p in PURPOSES.values():  # a broken table is a build error, caught at import
    check_weights(_p)
