"""Ranking: normalisation, stemming, BM25, the catalogue, gate, fold, RRF, the text leg's pool.

Imports at module level run one way (tests/test_wings.py): this wing may import no other wing, and the root's shared modules (errors, clean, sentences, query, answer); never a wing above it.
"""
