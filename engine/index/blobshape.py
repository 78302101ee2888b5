"""Whether a value decoded from one of kb's cache files has the shape kb writes there.

A cache's CRC-32s find accidents, not intent: anyone who can write the fleet can write a file
sealed exactly as kb seals it (engine/index/sealedfile.py) whose values are of another arity or
type. Such a value must be read as damage (the cache rebuilt), never handed to a constructor
or an unpacking that raises. A shape is written as the value it describes:

- a type (`str`), or a frozenset of types (`OPTIONAL_INT`): the value's exact type;
- a tuple of shapes: a tuple of that many values, each of its shape;
- a list of one shape: a tuple or list of any number of values of that shape.

`shaped(shape)` turns one into a test made once: a value's types are compared with `map` and
`set` in C, a list of flat tuples (a word's postings) column by column. A test written as a
walk over the shape cost as much as decoding the value (measured over the 60,000-chunk
haystack's entries and words), and a route decodes every entry it ranks.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from operator import call, contains

OPTIONAL_INT = frozenset({int, type(None)})
OPTIONAL_STR = frozenset({str, type(None)})
NUMBER = frozenset({int, float})
TEXTS = [str]
_SEQUENCES = frozenset({tuple, list})
_TUPLE = frozenset({tuple})


def shaped(shape) -> Callable[[object], bool]:
    """A test of whether a value has `shape` (see the module's doc)."""
    if type(shape) is list:
        each = _all_shaped(shape[0])
        return lambda v: type(v) in _SEQUENCES and each(v)
    if type(shape) is tuple:
        # Every field's type in one pass (a nested field's: tuple or list), then the nested
        # fields' own tests.
        n, kinds = len(shape), tuple(map(_kinds, shape))
        nested = tuple((k, shaped(s)) for k, s in enumerate(shape) if type(s) in (tuple, list))
        if not nested:
            return lambda v: type(v) is tuple and len(v) == n and all(map(contains, kinds, map(type, v)))
        places, tests = tuple(k for k, _ in nested), tuple(t for _, t in nested)
        return lambda v: (type(v) is tuple and len(v) == n and all(map(contains, kinds, map(type, v)))
                          and all(map(call, tests, map(v.__getitem__, places))))
    allowed = _kinds(shape)
    return lambda v: type(v) in allowed


def _all_shaped(shape) -> Callable[[tuple | list], bool]:
    """A test of whether every value of a (non-empty or empty) sequence has `shape`."""
    if type(shape) is tuple:
        n = len(shape)
        columns, lengths = tuple(map(_all_shaped, shape)), {n}
        return lambda vs: not vs or (set(map(type, vs)) <= _TUPLE and set(map(len, vs)) == lengths
                                     and all(map(call, columns, zip(*vs))))
    if type(shape) is list:
        if type(shape[0]) in (tuple, list):
            each = shaped(shape)
            return lambda vs: all(map(each, vs))
        inner = _kinds(shape[0])  # sequences of plain values: their values in one pass
        return lambda vs: set(map(type, vs)) <= _SEQUENCES and set(map(type, chain.from_iterable(vs))) <= inner
    allowed = _kinds(shape)
    return lambda vs: set(map(type, vs)) <= allowed


def _kinds(shape) -> frozenset:
    """The types a value of `shape` may have."""
    if type(shape) is list:
        return _SEQUENCES
    if type(shape) is tuple:
        return _TUPLE
    return shape if type(shape) is frozenset else frozenset({shape})


def within(indexes, n: int) -> bool:
    """Whether every one of `indexes` (ints) points into a sequence of `n`."""
    return not indexes or (min(indexes) >= 0 and max(indexes) < n)


def firsts_within(rows, n: int) -> bool:
    """Whether every row's first value (an int; the rows of one shape) points into a sequence
    of `n`: the least and greatest row order by their first value."""
    return not rows or (min(rows)[0] >= 0 and max(rows)[0] < n)
