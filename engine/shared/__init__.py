"""What every wing may import and that holds no rule of kb's: the record of a result type.

Imports at module level run one way (tests/test_wings.py): this wing is the lowest, beside the
root's shared modules (errors, clean, sentences, query, answer), and imports no other wing.
"""
