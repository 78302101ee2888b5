"""kb's value layout (engine/index/valuelayout.py): what `encode` writes `decode` reads back
as it was, and bytes it did not write are `Damaged`, never a crash, a hang or a deep stack.

The reader is one loop with a stack of open containers (not a call per value: ~30% of the
fleet's opening head over 2,000 bases, docs/speed.md); these hold it to the rules the recursive
reader kept: nesting at most 32 deep, every count checked against the bytes left.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.index.valuelayout import Damaged, decode, encode

scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
           | st.text() | st.binary(max_size=8))
values = st.recursive(
    scalars,
    lambda inner: (st.lists(inner, max_size=4) | st.lists(inner, max_size=4).map(tuple)
                   | st.dictionaries(st.integers() | st.text(max_size=3), inner, max_size=3)
                   | st.lists(st.text(max_size=3), min_size=1, max_size=4).map(tuple)),
    max_leaves=20,
)


@given(values)
def test_what_encode_wrote_reads_back_as_it_was(value):
    got = decode(encode(value))
    assert got == value and type(got) is type(value)


@given(values, st.data())
def test_bytes_cut_short_or_changed_are_damaged_or_another_value_never_a_crash(value, data):
    raw = bytearray(encode(value))
    if data.draw(st.booleans()) or not raw:
        raw = raw[: data.draw(st.integers(0, max(len(raw) - 1, 0)))]
    else:
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        decode(bytes(raw))
    except Damaged:
        pass


def _nested(depth: int) -> bytes:
    return (b"(" + struct.pack("<I", 1)) * depth + b"N"


def test_nesting_past_32_is_damaged_and_32_is_read():
    value = None
    for _ in range(32):
        value = (value,)
    assert decode(_nested(32)) == value
    with pytest.raises(Damaged):
        decode(_nested(33))
    with pytest.raises(Damaged):
        decode(b"[" + struct.pack("<I", 1) + _nested(32))  # 33 deep under a list
    deep = b"(" + struct.pack("<I", 1)
    with pytest.raises(Damaged):
        decode(deep * 100_000 + b"N")  # refused at 33, long before a stack could run out


def test_a_count_past_the_bytes_left_is_refused_before_anything_is_made():
    for tag in (b"(", b"[", b"{", b"s", b"b", b"S", b"L", b"I"):
        with pytest.raises(Damaged):
            decode(tag + struct.pack("<I", 1 << 30) + b"\0" * 16)
    with pytest.raises(Damaged):
        decode(b"{" + struct.pack("<I", 1) + b"[" + struct.pack("<I", 0) + b"N")  # a list as a key
    with pytest.raises(Damaged):
        decode(encode((1, 2)) + b"N")  # bytes past its end
