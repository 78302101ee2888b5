"""W06's rule, in one place: when is a `Search for:` line thin?

`kb check` warns about a thin line and `kb label` proposes keys for one; both ask here, so a
note the check calls thin is exactly a note the labeller offers to widen. A key counts by
what the index sees: its terms after the stopwords. Two keys that collapse to the same terms
(`the widget`, `widget`) count once, and a key made only of stopwords counts not at all.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..rank.normalize import terms

THIN_BELOW = 12  # W06 fires under this many distinct terms...
THIN_ASK = 30  # ...and asks for this many: the widening that turned a zero into 130.21


def distinct_terms(keys: Iterable[str]) -> set[str]:
    """The keys as the index sees them: each key's terms joined, empty ones left out."""
    return {" ".join(t) for t in (terms(k) for k in keys) if t}


def is_thin(keys: Iterable[str]) -> bool:
    return len(distinct_terms(keys)) < THIN_BELOW
