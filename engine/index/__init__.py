"""The index: store, schema, update, FTS5, recovery, the resident leg, the caches of an opening.

Imports at module level run one way (tests/test_wings.py): this wing may import engine.rank, engine.notes, and the root's shared modules (errors, clean, sentences, query, answer); never a wing above it.
"""
