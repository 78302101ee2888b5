"""Tooling around kbtui, outside the runtime package: benchmarks and generated haystacks.

Nothing in `engine/` or `kbtui/` imports from here except the `kb bench` verb, on use.
"""
