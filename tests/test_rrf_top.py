"""rrf_top is rrf cut to the page, exactly: the same ids, floats and order for any two ranked
lists (overlapping, disjoint, with repeats) and any page length."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.rank.rrf import rrf, rrf_top

ids = st.sampled_from([f"b/{i}.md" for i in range(40)])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(keyword=st.lists(ids, max_size=60), text=st.lists(ids, max_size=50), limit=st.integers(0, 30))
def test_rrf_top_is_the_head_of_rrf(keyword, text, limit):
    assert rrf_top(keyword, text, limit) == rrf(keyword, text)[:limit]


def test_a_long_keyword_list_is_cut_before_it_is_sorted():
    keyword = [f"a/{i:05d}.md" for i in range(3000)]
    text = [f"a/{i:05d}.md" for i in range(2999, 2949, -1)] + ["t/only.md"]
    assert rrf_top(keyword, text, 5) == rrf(keyword, text)[:5]
    # first in the text and last of 3,000 keywords beats first in the keywords alone: 1/3060 + 1/61 > 1/61
    assert rrf_top(keyword, text, 1)[0][0] == "a/02999.md"
