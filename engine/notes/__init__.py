"""The notes on disk: discovery, reading, chunking, and writing safely beside them.

Imports at module level run one way (tests/test_wings.py): this wing may import engine.rank, and the root's shared modules (errors, clean, sentences, query, answer); never a wing above it.
"""
