"""Tooling that is run, not served: model import, generated haystacks, benchmarks.

Nothing in `engine` or `kbtui` imports from here at module level; a `kb` verb that needs a
tool (`kb model import`, `kb rerank bench`) imports it inside the verb, so `kb route` and
the reading room never load it.
"""
