"""kb's own value layout: the bytes a cache's head, its blobs and a second process's frames
hold (None, bools, ints, floats, str, bytes, and tuples, lists and dicts of them).

Not marshal or pickle: `decode` checks every length and count against the bytes left before it
uses one, and nests at most 32 deep, so bytes it did not write (a planted file, a damaged
frame) are `Damaged`, never a crash, a hang, or an allocation past a small multiple of their
size. The file the values live in, and its seal, are engine/index/sealedfile.py.
"""

from __future__ import annotations

import itertools
import struct
import sys
from array import array


class Damaged(Exception):
    """A region's bytes do not match their CRC-32 (or the file is shorter than its head says)."""


# -- values: kb's own layout, safe to decode --------------------------------------------------
#
# One tag byte, then: N T F (None, True, False); i an int in 8 bytes; I a larger int (length,
# bytes); f a float in 8; s str and b bytes (length, bytes; str UTF-8, surrogates kept as
# marshal kept them); ( tuple and [ list (count, items); { dict (count, key and value each);
# S a tuple and L a list of strs (count, UTF-8 length, each one's length in characters, the
# text): a table's thousands of paths decode as one string cut up, not one value each.
# Lengths and counts are 4 bytes, little-endian. A reader checks every length and count
# against the bytes left before it uses one, and nests at most _DEPTH deep.

_U32, _I64, _F64 = struct.Struct("<I"), struct.Struct("<q"), struct.Struct("<d")
_DEPTH = 32
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1


def encode(value) -> bytes:
    """`value` (None, bool, int, float, str, bytes, and tuples, lists and dicts of them) in
    kb's layout; ValueError for anything else."""
    out = bytearray()
    _put(out, value, 0)
    return bytes(out)


def _put(out: bytearray, v, depth: int) -> None:
    t = type(v)
    if depth > _DEPTH:
        raise ValueError("nested too deep for a cache")
    if t is str:
        raw = v.encode("utf-8", "surrogatepass")
        out += b"s" + _U32.pack(len(raw)) + raw
    elif t is int:
        if _INT_MIN <= v <= _INT_MAX:
            out += b"i" + _I64.pack(v)
        else:
            raw = v.to_bytes(v.bit_length() // 8 + 1, "little", signed=True)
            out += b"I" + _U32.pack(len(raw)) + raw
    elif t is tuple or t is list:
        if v and all(type(x) is str for x in v):
            raw = "".join(v).encode("utf-8", "surrogatepass")
            out += (b"S" if t is tuple else b"L") + _U32.pack(len(v)) + _U32.pack(len(raw))
            out += array("I", map(len, v)).tobytes() if sys.byteorder == "little" else _swapped(map(len, v))
            out += raw
        else:
            out += (b"(" if t is tuple else b"[") + _U32.pack(len(v))
            for x in v:
                _put(out, x, depth + 1)
    elif v is None:
        out += b"N"
    elif t is bool:
        out += b"T" if v else b"F"
    elif t is float:
        out += b"f" + _F64.pack(v)
    elif t is bytes:
        out += b"b" + _U32.pack(len(v)) + v
    elif t is dict:
        out += b"{" + _U32.pack(len(v))
        for k, x in v.items():
            _put(out, k, depth + 1)
            _put(out, x, depth + 1)
    else:
        raise ValueError(f"not a value a cache holds: {t.__name__}")


def _swapped(lengths) -> bytes:
    a = array("I", lengths)
    a.byteswap()
    return a.tobytes()


def decode(raw: bytes, path: str = "a cache"):
    """The value `encode` wrote; Damaged for any bytes it did not write (never a crash, a
    hang, or memory past a small multiple of len(raw))."""
    try:
        value, at = _get(raw)
    except (struct.error, UnicodeDecodeError, IndexError, TypeError, ValueError, OverflowError, _Bad) as e:
        raise Damaged(f"{path}: not a value kb wrote ({e})") from None
    if at != len(raw):
        raise Damaged(f"{path}: not a value kb wrote (bytes past its end)")
    return value


class _Bad(Exception):
    pass


def _get(raw: bytes) -> tuple[object, int]:
    """The value at the start of `raw` and where it ends. One loop, not a call per value:
    over 2,000 small bases the fleet's opening head is ~100,000 values: a fresh process read
    it in ~120 ms by a call per value, ~90 ms so (marshal ~20 ms), and the 2,000 plans of
    fleet_plans in ~34 ms against ~48 (tests/test_valuelayout.py holds the rules kept)."""
    end, at = len(raw), 0
    u32, i64 = _U32.unpack_from, _I64.unpack_from
    tags: list[int] = []  # the containers open, innermost last: their tags,
    lists: list[list] = []  # the items each holds so far,
    left: list[int] = []  # and how many each still waits for
    while True:
        tag = raw[at]
        at += 1
        if tag == 0x69:  # i
            v = i64(raw, at)[0]
            at += 8
        elif tag == 0x73 or tag == 0x62:  # s b
            n = u32(raw, at)[0]
            at += 4
            if n > end - at:
                raise _Bad("a length past the end")
            v = raw[at:at + n].decode("utf-8", "surrogatepass") if tag == 0x73 else raw[at:at + n]
            at += n
        elif tag == 0x28 or tag == 0x5B or tag == 0x7B:  # ( [ {
            if len(tags) >= _DEPTH:
                raise _Bad("nested too deep")
            n = u32(raw, at)[0] * (2 if tag == 0x7B else 1)  # a dict's key and value each an item
            at += 4
            if n > end - at:  # each item is at least one byte
                raise _Bad("a length past the end")
            if n:
                tags.append(tag)
                lists.append([])
                left.append(n)
                continue
            v = () if tag == 0x28 else [] if tag == 0x5B else {}
        elif tag == 0x4E:  # N
            v = None
        else:
            v, at = _other(raw, at, tag)
        # v is whole: it joins the container open last, and closes each one it completes
        while tags:
            items = lists[-1]
            items.append(v)
            left[-1] -= 1
            if left[-1]:
                break
            tag = tags.pop()
            lists.pop()
            left.pop()
            v = tuple(items) if tag == 0x28 else items if tag == 0x5B else _dict(items)
        else:
            return v, at


def _dict(items: list) -> dict:
    out = {}
    for i in range(0, len(items), 2):
        out[items[i]] = items[i + 1]  # TypeError for a key that cannot be one (a list): Damaged
    return out


def _length(raw: bytes, at: int, each: int = 1) -> tuple[int, int]:
    """A length or count at `at`, checked to fit in the bytes left (`each` bytes an item)."""
    n = _U32.unpack_from(raw, at)[0]
    if n * each > len(raw) - at - 4:
        raise _Bad("a length past the end")
    return n, at + 4


def _other(raw: bytes, at: int, tag: int) -> tuple[object, int]:
    """A value of a tag _get does not read itself (fewer of them, or whole tables)."""
    if tag in (0x53, 0x4C):  # S L
        n, at = _length(raw, at, 4)
        size, at = _length(raw, at)
        if 4 * n + size > len(raw) - at:
            raise _Bad("a length past the end")
        lengths = array("I")
        lengths.frombytes(raw[at:at + 4 * n])
        if sys.byteorder != "little":
            lengths.byteswap()
        at += 4 * n
        text = raw[at:at + size].decode("utf-8", "surrogatepass")
        ends = list(itertools.accumulate(lengths))
        if not n or ends[-1] != len(text):
            raise _Bad("lengths that do not add up")
        strs = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
        return (tuple(strs) if tag == 0x53 else strs), at + size
    if tag == 0x54:  # T
        return True, at
    if tag == 0x46:  # F
        return False, at
    if tag == 0x66:  # f
        return _F64.unpack_from(raw, at)[0], at + 8
    if tag == 0x49:  # I
        n, at = _length(raw, at)
        if n > 64:
            raise _Bad("an int too long")
        return int.from_bytes(raw[at:at + n], "little", signed=True), at + n
    raise _Bad(f"tag {tag}")
