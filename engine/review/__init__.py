"""The review verbs: misses, eval, check, label, remember, boot.

Imports at module level run one way (tests/test_wings.py): this wing may import engine.rank, engine.notes, engine.index, engine.stages, and the root's shared modules (errors, clean, sentences, query, answer); never a wing above it.
"""
